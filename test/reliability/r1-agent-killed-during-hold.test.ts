import { once } from "node:events";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  describeKeyEvent,
  type KeyRecorder,
  type RecordedKeyEvent,
  startKeyRecorder,
} from "../support/key-recorder.ts";
import { freePort } from "../support/ports.ts";
import { type AgentProcess, startAgent } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";
import { startXvfb, type Xvfb } from "../support/xvfb.ts";

/**
 * R1: a host agent that dies in the middle of a 5 s key hold. The gateway must give up on the call within its
 * deadline without inviting a retry (the keys may have been pressed), and no key may stay down on the display.
 */

const HOLD_MS = 5_000;
const AGENT_TIMEOUT_MS = 2_000;
/** What the gateway allows a press: AGENT_TIMEOUT_MS plus the duration. */
const DEADLINE_MS = AGENT_TIMEOUT_MS + HOLD_MS;
/** How long into the hold the agent is stopped. */
const STOP_AFTER_MS = 1_000;

let xvfb: Xvfb;
let recorder: KeyRecorder;
let system: System;
let agentEnv: NodeJS.ProcessEnv;
/** The agent now serving the session's address (the system's first, then each restart). */
let agent: AgentProcess;
/** The session on that agent (a new one after each restart). */
let sessionId: string;
const figures: Record<string, number> = {};

beforeAll(async () => {
  xvfb = await startXvfb();
  recorder = await startKeyRecorder(xvfb.display);
  // A fixed address, so a restarted agent is the same host to the gateway and the session.
  agentEnv = { DISPLAY: xvfb.display, AGENT_LISTEN: `127.0.0.1:${await freePort()}` };
  system = await startSystem({
    store: "sqlite",
    agentEnv,
    gatewayEnv: { AGENT_TIMEOUT_MS: String(AGENT_TIMEOUT_MS) },
  });
  agent = system.agent;
  sessionId = system.session.id;
});

afterAll(async () => {
  await agent?.stop();
  await system?.stop();
  await recorder?.close();
  await xvfb?.stop();
  console.info(`R1 figures: ${JSON.stringify(figures)}`);
});

beforeEach(() => {
  recorder.clear();
});

const HOLD_KEYS = ["Shift_L", "a"];

function startHold(): Promise<{ res: Response; ms: number }> {
  const started = performance.now();
  return system
    .api(`/browsers/${sessionId}/computer/press_key`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ keys: ["a"], hold_keys: ["Shift_L"], duration: HOLD_MS }),
    })
    .then((res) => ({ res, ms: performance.now() - started }));
}

/**
 * The last event of each key, in order: a held key autorepeats (the X server sends release/press pairs while
 * it is down), so only the final event per keycode says whether and when it came up.
 */
function finalEvents(events: readonly RecordedKeyEvent[]): RecordedKeyEvent[] {
  const last = new Map<number, number>();
  events.forEach((event, index) => {
    last.set(event.keycode, index);
  });
  return [...last.values()].sort((a, b) => a - b).map((index) => events[index] as RecordedKeyEvent);
}

/** Resolves once the X server reports every key of the hold down. */
async function waitForKeysDown(): Promise<number[]> {
  await recorder.waitUntil((events) => events.filter((event) => event.type === "press").length >= HOLD_KEYS.length);
  return recorder.keysDown();
}

/**
 * Restarts the agent at the same address. A restarted agent runs none of the sessions of the one
 * before (it wiped them at start), so the gateway ends the old session once it sees the new agent,
 * and the next session is created on the same host.
 */
async function restartAgent(): Promise<void> {
  agent = await startAgent(agentEnv);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await system.api("/browsers", { method: "POST" });
    if (res.status === 200) {
      sessionId = ((await res.json()) as { session_id: string }).session_id;
      return;
    }
    if (Date.now() > deadline)
      throw new Error(`the gateway did not start a session on the restarted agent: ${res.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("R1 host agent killed during a 5 s key hold", () => {
  it("answers 502 or 504 with x-should-retry false within the deadline when the agent is SIGKILLed mid-hold", async () => {
    const hold = startHold();
    const down = await waitForKeysDown();
    expect(down).toHaveLength(HOLD_KEYS.length);
    await new Promise((resolve) => setTimeout(resolve, STOP_AFTER_MS));
    const killedAt = performance.now();
    agent.child.kill("SIGKILL");
    const { res, ms } = await hold;
    const afterKillMs = performance.now() - killedAt;
    figures.sigkillAnswerMs = Math.round(ms);
    figures.sigkillAnswerAfterKillMs = Math.round(afterKillMs);
    expect([502, 504]).toContain(res.status);
    expect(res.headers.get("x-should-retry")).toBe("false");
    const body = (await res.json()) as { code: string };
    expect(body.code).toBe(res.status === 502 ? "host_unavailable" : "host_timeout");
    expect(ms).toBeLessThan(DEADLINE_MS + 1_000);
    // The hold was cut short by the kill, not waited out.
    expect(afterKillMs).toBeLessThan(2_000);
    figures.sigkillStatus = res.status;
  });

  it("leaves the keys of a SIGKILLed agent down until the agent restarts, then none is down (QueryKeymap)", async () => {
    // The X server does not release XTEST keys of a client that died: only the agent can.
    const stillDown = await recorder.keysDown();
    figures.keysDownAfterSigkill = stillDown.length;
    expect(stillDown).toHaveLength(HOLD_KEYS.length);
    const restartStarted = performance.now();
    await restartAgent();
    figures.restartUntilServingMs = Math.round(performance.now() - restartStarted);
    expect(await recorder.keysDown()).toEqual([]);
    expect(finalEvents(recorder.events).map(describeKeyEvent)).toEqual([
      "release A (Shift)",
      "release Shift_L (Shift)",
    ]);
  });

  it("releases the keys before it exits when it gets SIGTERM mid-hold, and the gateway answers 502 not to be retried", async () => {
    const hold = startHold();
    const down = await waitForKeysDown();
    expect(down).toHaveLength(HOLD_KEYS.length);
    await new Promise((resolve) => setTimeout(resolve, STOP_AFTER_MS));
    const pressedAt = recorder.events.find((event) => event.type === "press")?.time ?? 0;
    const exited = once(agent.child, "exit");
    agent.child.kill("SIGTERM");
    await exited;
    // Nothing else can release them: the previous test showed the X server keeps a dead client's keys down.
    // A round trip on the recorder's connection first, so every event sent before it has arrived.
    const downAfterExit = await recorder.keysDown();
    expect(downAfterExit).toEqual([]);
    const releases = finalEvents(recorder.events);
    expect(releases.map(describeKeyEvent)).toEqual(["release A (Shift)", "release Shift_L (Shift)"]);
    // Cut short: released well before the 5 s hold would have ended, by the X server's clock.
    const releasedAfterMs = (releases.at(-1)?.time ?? 0) - pressedAt;
    figures.sigtermReleasedAfterMs = releasedAfterMs;
    expect(releasedAfterMs).toBeLessThan(HOLD_MS - 1_000);

    const { res, ms } = await hold;
    figures.sigtermAnswerMs = Math.round(ms);
    expect(res.status).toBe(502);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(await res.json()).toMatchObject({ code: "host_unavailable" });
    expect(ms).toBeLessThan(DEADLINE_MS);
    await restartAgent();
  });
});
