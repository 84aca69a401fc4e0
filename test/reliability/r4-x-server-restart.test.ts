import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeKeyEvent, type KeyRecorder, startKeyRecorder } from "../support/key-recorder.ts";
import { sampleValue, scrape } from "../support/prometheus.ts";
import { type System, startSystem } from "../support/system.ts";
import { startXvfb, type Xvfb } from "../support/xvfb.ts";

/**
 * R4: the X server dies (SIGKILL) and comes back on the same display. The host agent keeps running: its keyboard
 * notices the lost connection and reconnects on the next press.
 */

/** How many presses after the restart may fail before the first succeeds. */
const MAX_ATTEMPTS = 3;

let xvfb: Xvfb;
let recorder: KeyRecorder | undefined;
let system: System;
let agentPid: number | undefined;
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  xvfb = await startXvfb();
  recorder = await startKeyRecorder(xvfb.display);
  system = await startSystem({ store: "sqlite", agentEnv: { DISPLAY: xvfb.display } });
  agentPid = system.agent.child.pid;
});

afterAll(async () => {
  await system?.stop();
  await recorder?.close().catch(() => undefined);
  await xvfb?.stop();
  console.info(`R4 figures: ${JSON.stringify(figures)}`);
});

function pressKey(keys: string[]): Promise<Response> {
  return system.api(`/browsers/${system.session.id}/computer/press_key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ keys }),
  });
}

/** Pids of this process's children whose command is `name`, from /proc (no procps needed). */
function childrenNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid …; comm may hold spaces and parentheses, so split after the last ")".
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (comm === name && ppid === process.pid) pids.push(Number(entry));
  }
  return pids;
}

/** Kills the X server the way a crash would: SIGKILL, so it cleans nothing up. It is this process's only Xvfb. */
async function killXServer(): Promise<void> {
  const pids = childrenNamed("Xvfb");
  expect(pids).toHaveLength(1);
  const pid = pids[0] as number;
  process.kill(pid, "SIGKILL");
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`X server ${pid} did not die`);
}

async function reconnects(): Promise<number> {
  return sampleValue(await scrape(system.agent.metricsUrl as string), "hostagent_x_reconnects_total");
}

describe("R4 X server restarted under a running host agent", () => {
  it("presses keys before the X server dies", async () => {
    expect((await pressKey(["a"])).status).toBe(200);
    const events = await (recorder as KeyRecorder).waitForEvents(2);
    expect(events.map(describeKeyEvent)).toEqual(["press a", "release a"]);
  });

  it("answers 503 display_unavailable, not to be retried, with a message naming the display while it is down", async () => {
    await recorder?.close().catch(() => undefined);
    recorder = undefined;
    await killXServer();
    const res = await pressKey(["a"]);
    expect(res.status).toBe(503);
    expect(res.headers.get("x-should-retry")).toBe("false");
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("display_unavailable");
    expect(body.message).toContain(xvfb.display);
    figures.whileDown = { status: res.status, code: body.code, message: body.message };
  });

  it(`presses the exact keys again within ${MAX_ATTEMPTS} attempts once the X server is back, without an agent restart`, async () => {
    const before = await reconnects();
    // The old Xvfb's stop() has nothing left to stop; the new one takes the same display.
    xvfb = { ...(await startXvfb({ display: xvfb.display })), display: xvfb.display };
    recorder = await startKeyRecorder(xvfb.display);
    const outcomes: string[] = [];
    let ok = false;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS && !ok; attempt++) {
      const res = await pressKey(["Ctrl+t", "B"]);
      outcomes.push(res.status === 200 ? "200" : `${res.status} ${((await res.json()) as { code: string }).code}`);
      ok = res.status === 200;
    }
    figures.attemptsAfterRestart = outcomes;
    expect(outcomes.at(-1)).toBe("200");
    const events = await recorder.waitForEvents(8);
    expect(events.map(describeKeyEvent)).toEqual([
      "press Control_L",
      "press t (Control)",
      "release t (Control)",
      "release Control_L (Control)",
      "press Shift_L",
      "press B (Shift)",
      "release B (Shift)",
      "release Shift_L (Shift)",
    ]);
    expect(await recorder.keysDown()).toEqual([]);
    expect(system.agent.child.pid).toBe(agentPid);
    expect(system.agent.child.exitCode).toBeNull();
    figures.reconnectsCounted = (await reconnects()) - before;
    expect(await reconnects()).toBe(before + 1);
  });
});
