import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { describeKeyEvent, type KeyRecorder, startKeyRecorder } from "../support/key-recorder.ts";
import { type System, startSystem } from "../support/system.ts";
import { startXvfb, type Xvfb } from "../support/xvfb.ts";

/**
 * The host agent's own bounds on presses: it honours the call's cancellation (the HTTP client went
 * away) and deadline, caps `duration`, and bounds how many presses may wait.
 */

/** Long enough for a press queued behind a 1.5 s hold, short enough to pass during a 4 s one. */
const AGENT_TIMEOUT_MS = 2_000;
const AGENT_MAX_PRESS_DURATION_MS = 10_000;
const AGENT_MAX_QUEUED_PRESSES = 2;

let xvfb: Xvfb;
let recorder: KeyRecorder;
let system: System;

beforeAll(async () => {
  xvfb = await startXvfb();
  recorder = await startKeyRecorder(xvfb.display);
  system = await startSystem({
    store: "sqlite",
    agentEnv: {
      DISPLAY: xvfb.display,
      AGENT_MAX_PRESS_DURATION_MS: String(AGENT_MAX_PRESS_DURATION_MS),
      AGENT_MAX_QUEUED_PRESSES: String(AGENT_MAX_QUEUED_PRESSES),
    },
    gatewayEnv: { AGENT_TIMEOUT_MS: String(AGENT_TIMEOUT_MS), MAX_PRESS_DURATION_MS: "60000" },
  });
});

afterAll(async () => {
  await system?.stop();
  await recorder?.close();
  await xvfb?.stop();
});

beforeEach(() => {
  recorder.clear();
});

function pressKey(body: unknown, signal?: AbortSignal): Promise<Response> {
  return system.api(`/browsers/${system.session.id}/computer/press_key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
}

/** Waits until the hold's key is down on the X server. */
async function holdStarted(): Promise<void> {
  await recorder.waitUntil((events) => events.some((event) => event.type === "press"));
}

/**
 * The keys the recorder saw events of, in order of their first event, once the X server delivered
 * what it had (a held key autorepeats, so it has many).
 */
async function keysSeen(): Promise<string[]> {
  await recorder.keysDown();
  return [...new Set(recorder.events.map((event) => describeKeyEvent(event).split(" ")[1] ?? ""))];
}

describe("press_key bounds on the host agent", () => {
  it("cuts a hold short and releases its keys when the HTTP client goes away", async () => {
    const client = new AbortController();
    const hold = pressKey({ keys: ["a"], duration: 5_000 }, client.signal).catch((error: Error) => error);
    await holdStarted();
    const pressedAt = recorder.events[0]?.time ?? 0;
    client.abort();
    expect(await hold).toBeInstanceOf(Error);
    await recorder.waitUntil((events) => events.some((event) => event.type === "release"));
    expect(await recorder.keysDown()).toEqual([]);
    const released = recorder.events.findLast((event) => event.type === "release");
    // By the X server's clock: released well before the 5 s hold would have ended.
    expect((released?.time ?? 0) - pressedAt).toBeLessThan(2_000);
  });

  it("drops a press still waiting when its client goes away, and presses nothing of it", async () => {
    const hold = pressKey({ keys: ["a"], duration: 1_500 });
    await holdStarted();
    const client = new AbortController();
    const queued = pressKey({ keys: ["b"] }, client.signal).catch((error: Error) => error);
    await sleep(200);
    client.abort();
    expect(await queued).toBeInstanceOf(Error);
    expect((await hold).status).toBe(200);
    await sleep(300);
    expect(await keysSeen()).toEqual(["a"]);
  });

  it("drops a press still waiting when its deadline passes", async () => {
    // The queued tap's deadline is AGENT_TIMEOUT_MS: it passes while the 4 s hold runs.
    const hold = pressKey({ keys: ["a"], duration: 4_000 });
    await holdStarted();
    const queued = await pressKey({ keys: ["b"] });
    expect(queued.status).toBe(504);
    expect(await queued.json()).toMatchObject({ code: "host_timeout" });
    expect((await hold).status).toBe(200);
    await sleep(300);
    expect(await keysSeen()).toEqual(["a"]);
  });

  it("answers 429 with Retry-After, safe to retry, and presses nothing when too many presses wait", async () => {
    const hold = pressKey({ keys: ["a"], duration: 1_500 });
    await holdStarted();
    const waiting = [pressKey({ keys: ["b"] }), pressKey({ keys: ["b"] })];
    await sleep(200);
    const refused = await pressKey({ keys: ["c"] });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("x-should-retry")).toBe("true");
    expect(await refused.json()).toMatchObject({ code: "too_many_requests" });
    for (const res of await Promise.all([hold, ...waiting])) expect(res.status).toBe(200);
    expect(await keysSeen()).toEqual(["a", "b"]);
  });

  it("refuses a duration over its own maximum with 400 and presses nothing", async () => {
    const res = await pressKey({ keys: ["a"], duration: AGENT_MAX_PRESS_DURATION_MS + 1 });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: "bad_request",
      message: `duration: must be at most ${AGENT_MAX_PRESS_DURATION_MS} ms on this host`,
    });
    expect(await keysSeen()).toEqual([]);
  });
});
