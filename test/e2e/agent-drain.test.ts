import { once } from "node:events";
import { chromium as playwright } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CHROMIUM_PATH } from "../../packages/host-agent/src/config.ts";
import { type System, startSystem } from "../support/system.ts";

/**
 * A host agent told to stop (SIGTERM: a Kubernetes scale-down, a rollout, a node drain) with
 * AGENT_DRAIN_TIMEOUT_MS set does not kill the busy browser: it takes no new session, lets the
 * running one go on until it ends, and ends it itself only when the drain timeout is over.
 */

let system: System | undefined;

afterEach(async () => {
  await system?.stop();
  system = undefined;
});

function start(drainTimeoutMs: number): Promise<System> {
  return startSystem({
    store: "sqlite",
    agentEnv: {
      DISPLAY: "",
      AGENT_CHROMIUM_PATH: DEFAULT_CHROMIUM_PATH,
      AGENT_DRAIN_TIMEOUT_MS: String(drainTimeoutMs),
    },
  });
}

describe("an agent told to drain while a session runs", () => {
  it("keeps serving that session, takes no other, and exits once its client deletes it", async () => {
    system = await start(60_000);
    const { agent, session } = system;
    const exited = once(agent.child, "exit");
    agent.child.kill("SIGTERM");
    await agent.waitForLog((line) => line.msg === "draining" && line.sessionId === session.id);

    // The running session's browser still answers through the gateway.
    const res = await system.api(`/browsers/${session.id}`);
    expect(res.status).toBe(200);
    const { cdp_ws_url } = (await res.json()) as { cdp_ws_url: string };
    const browser = await playwright.connectOverCDP(cdp_ws_url);
    const [page] = browser.contexts()[0]?.pages() ?? [];
    expect(await page?.evaluate(() => 6 * 7)).toBe(42);

    // No new session lands on it.
    const created = await system.api("/browsers", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({}),
    });
    expect(created.status).toBeGreaterThanOrEqual(500);
    expect(agent.child.exitCode).toBeNull();

    const deleted = await system.api(`/browsers/${session.id}`, { method: "DELETE" });
    expect(deleted.ok).toBe(true);
    const [code] = await exited;
    expect(code).toBe(0);
    expect(agent.lines.some((line) => line.includes("the host agent shut down"))).toBe(false);
  });

  it("ends the session itself, and wipes it, once AGENT_DRAIN_TIMEOUT_MS is over", async () => {
    system = await start(1_500);
    const { agent, session } = system;
    const exited = once(agent.child, "exit");
    const signalled = performance.now();
    agent.child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
    expect(performance.now() - signalled).toBeGreaterThanOrEqual(1_500);
    const stopped = await agent.waitForLog((line) => line.msg === "session stopped");
    expect(stopped).toMatchObject({ sessionId: session.id, reason: "the host agent shut down" });
  });
});
