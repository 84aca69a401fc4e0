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
  const slot = { hasBrowser: true, currentSessionId: "s1", instance: "i1" };

  it("reports the display, its screen size and the session the slot runs", async () => {
    expect(await describeHost({ display: xvfb.display }, slot, logger)).toMatchObject({
      display: xvfb.display,
      screenWidth: 1024,
      screenHeight: 768,
      hasBrowser: true,
      sessionId: "s1",
      agentInstance: "i1",
    });
  });

  it("reports no display, a zero screen size and no session for an idle host without a display", async () => {
    const idle = { hasBrowser: false, currentSessionId: undefined, instance: "i1" };
    expect(await describeHost({ display: undefined }, idle, logger)).toMatchObject({
      display: "",
      screenWidth: 0,
      screenHeight: 0,
      hasBrowser: false,
      sessionId: "",
    });
  });

  it("reports the size as unknown (0) when the display's X server is down", async () => {
    expect(await describeHost({ display: ":987" }, slot, logger)).toMatchObject({
      display: ":987",
      screenWidth: 0,
      screenHeight: 0,
    });
  });
});
