import Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MAX_KEYS } from "../../packages/gateway/src/browsers/press-key.ts";
import { describeKeyEvent, type KeyRecorder, startKeyRecorder } from "../support/key-recorder.ts";
import { freePort } from "../support/ports.ts";
import { startAgent } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";
import { startXvfb, type Xvfb } from "../support/xvfb.ts";

let xvfb: Xvfb;
let recorder: KeyRecorder;
let system: System;

beforeAll(async () => {
  xvfb = await startXvfb();
  recorder = await startKeyRecorder(xvfb.display);
  system = await startSystem({ store: "sqlite", agentEnv: { DISPLAY: xvfb.display } });
});

afterAll(async () => {
  await system?.stop();
  await recorder?.close();
  await xvfb?.stop();
});

beforeEach(() => {
  recorder.clear();
});

function pressKey(body: unknown, session = system.session.name): Promise<Response> {
  return system.api(`/browsers/${encodeURIComponent(session)}/computer/press_key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function expectEvents(expected: string[]): Promise<void> {
  const events = await recorder.waitForEvents(expected.length);
  expect(events.map(describeKeyEvent)).toEqual(expected);
}

async function expectInvalidInput(res: Response, messages: RegExp[]): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { code: string; details: { code: string; message: string }[] };
  expect(body.code).toBe("bad_request");
  expect(body.details.map((d) => d.code)).toEqual(messages.map(() => "invalid_input"));
  messages.forEach((message, i) => {
    expect(body.details[i]?.message).toMatch(message);
  });
}

/** Lets any stray event arrive before asserting that none did. */
async function expectNoEvents(): Promise<void> {
  await recorder.keysDown();
  expect(recorder.events).toEqual([]);
}

describe("POST /browsers/{id_or_name}/computer/press_key", () => {
  it("answers 200 with an empty body after the keys were pressed", async () => {
    const res = await pressKey({ keys: ["Return"] });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    await expectEvents(["press Return", "release Return"]);
  });

  it("presses a combination with its modifiers around the key", async () => {
    expect((await pressKey({ keys: ["Ctrl+t"] })).status).toBe(200);
    await expectEvents(["press Control_L", "press t (Control)", "release t (Control)", "release Control_L (Control)"]);
  });

  it("presses an uppercase letter with Shift", async () => {
    expect((await pressKey({ keys: ["A"] })).status).toBe(200);
    await expectEvents(["press Shift_L", "press A (Shift)", "release A (Shift)", "release Shift_L (Shift)"]);
  });

  it("holds hold_keys around the whole sequence", async () => {
    expect((await pressKey({ keys: ["a", "b"], hold_keys: ["Shift"] })).status).toBe(200);
    await expectEvents([
      "press Shift_L",
      "press A (Shift)",
      "release A (Shift)",
      "press B (Shift)",
      "release B (Shift)",
      "release Shift_L (Shift)",
    ]);
  });

  it("holds the keys for duration milliseconds", async () => {
    expect((await pressKey({ keys: ["x"], duration: 300 })).status).toBe(200);
    const [down, up] = await recorder.waitForEvents(2);
    expect(describeKeyEvent(down as never)).toBe("press x");
    expect(describeKeyEvent(up as never)).toBe("release x");
    expect((up?.time ?? 0) - (down?.time ?? 0)).toBeGreaterThanOrEqual(300);
  });

  it("refuses an unknown key in the middle of a list with 400 naming it, and presses nothing", async () => {
    await expectInvalidInput(await pressKey({ keys: ["a", "NoSuchKey", "b"] }), [/^keys\[1\]: .*NoSuchKey/]);
    await expectNoEvents();
  });

  it("names every unknown key in keys and hold_keys", async () => {
    await expectInvalidInput(await pressKey({ keys: ["Bogus1", "a", "Ctrl+Bogus2"], hold_keys: ["Bogus3"] }), [
      /^keys\[0\]: /,
      /^keys\[2\]: /,
      /^hold_keys\[0\]: /,
    ]);
    await expectNoEvents();
  });

  it.each([
    ["keys missing", {}, /^keys: /],
    ["keys empty", { keys: [] }, /^keys: /],
    ["keys not an array", { keys: "a" }, /^keys: /],
    ["a key not a string", { keys: ["a", 5] }, /^keys\[1\]: /],
    ["duration negative", { keys: ["a"], duration: -1 }, /^duration: /],
    ["duration fractional", { keys: ["a"], duration: 1.5 }, /^duration: /],
    ["duration not a number", { keys: ["a"], duration: "100" }, /^duration: /],
    ["duration over the maximum", { keys: ["a"], duration: 300_001 }, /^duration: /],
    ["hold_keys not strings", { keys: ["a"], hold_keys: [1] }, /^hold_keys\[0\]: /],
  ])("refuses %s with 400 and presses nothing", async (_case, body, message) => {
    await expectInvalidInput(await pressKey(body), [message]);
    await expectNoEvents();
  });

  it("refuses more than MAX_KEYS keys with one problem, however many items are bad", async () => {
    const res = await pressKey({ keys: Array(MAX_KEYS * 50).fill(0) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { details: { message: string }[] };
    expect(body.details).toEqual([{ code: "invalid_input", message: `keys: must have at most ${MAX_KEYS} items` }]);
  });

  it("answers 404 for an unknown session", async () => {
    const res = await pressKey({ keys: ["a"] }, "no-such-session");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "not_found" });
  });

  it("answers 503 display_unavailable, not to be retried, when the host has no display", async () => {
    const headless = await startAgent({ DISPLAY: "" });
    try {
      const session = await system.newSession(system.organizationId, "no-display", headless.address, {});
      const res = await pressKey({ keys: ["a"] }, session.name);
      expect(res.status).toBe(503);
      expect(res.headers.get("x-should-retry")).toBe("false");
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe("display_unavailable");
      expect(body.message).toMatch(/xvfb/i);
    } finally {
      await headless.stop();
    }
  });

  it("answers 502 host_unavailable with x-should-retry false when the host is unreachable", async () => {
    const session = await system.newSession(system.organizationId, "unreachable", `127.0.0.1:${await freePort()}`);
    const res = await pressKey({ keys: ["a"] }, session.name);
    expect(res.status).toBe(502);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(await res.json()).toMatchObject({ code: "host_unavailable" });
  });

  it("presses keys through @onkernel/sdk's browsers.computer.pressKey", async () => {
    const kernel = new Kernel({ apiKey: system.apiKey, baseURL: system.gateway.url, maxRetries: 0 });
    await kernel.browsers.computer.pressKey(system.session.name, { keys: ["ctrl + shift + tab"] });
    await expectEvents([
      "press Control_L",
      "press Shift_L (Control)",
      "press ISO_Left_Tab (Shift+Control)",
      "release ISO_Left_Tab (Shift+Control)",
      "release Shift_L (Shift+Control)",
      "release Control_L (Control)",
    ]);
  });

  it("leaves no key down after the suite's requests", async () => {
    await pressKey({ keys: ["a", "Ctrl+Shift+Tab"], duration: 50, hold_keys: ["Alt"] });
    expect(await recorder.keysDown()).toEqual([]);
  });
});
