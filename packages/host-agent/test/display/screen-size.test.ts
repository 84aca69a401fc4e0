import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startXvfb, type Xvfb } from "../../../../test/support/xvfb.ts";
import { describeHost } from "../../src/display/describe-host.ts";
import { readScreenSize } from "../../src/display/screen-size.ts";

let xvfb: Xvfb;
const logger = pino({ level: "silent" });

beforeAll(async () => {
  xvfb = await startXvfb();
});

afterAll(async () => {
  await xvfb?.stop();
});

describe("readScreenSize", () => {
  it("reads the size of the display's root window", async () => {
    expect(await readScreenSize(xvfb.display)).toEqual({ width: 1024, height: 768 });
  });

  it("reads screen 0 for a display named with its screen number", async () => {
    expect(await readScreenSize(`${xvfb.display}.0`)).toEqual({ width: 1024, height: 768 });
  });

  it("rejects when no X server serves the display", async () => {
    await expect(readScreenSize(":987")).rejects.toThrow();
  });
});

describe("describeHost", () => {
  it("reports the display and its screen size", async () => {
    expect(await describeHost({ display: xvfb.display, cdpWsUrl: "ws://x" }, logger)).toMatchObject({
      display: xvfb.display,
      screenWidth: 1024,
      screenHeight: 768,
      cdpWsUrl: "ws://x",
    });
  });

  it("reports no display, a zero screen size and no CDP URL for a host without them", async () => {
    expect(await describeHost({ display: undefined, cdpWsUrl: undefined }, logger)).toMatchObject({
      display: "",
      screenWidth: 0,
      screenHeight: 0,
      cdpWsUrl: "",
    });
  });

  it("reports the size as unknown (0) when the display's X server is down", async () => {
    expect(await describeHost({ display: ":987", cdpWsUrl: undefined }, logger)).toMatchObject({
      display: ":987",
      screenWidth: 0,
      screenHeight: 0,
    });
  });
});
