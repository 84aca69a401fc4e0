import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentProcess, startAgent } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";

// The shortest idle timeout the API accepts.
const TIMEOUT_SECONDS = 10;
const IDLE_CHECK_INTERVAL_MS = 200;

let system: System;
const extraAgents: AgentProcess[] = [];

beforeAll(async () => {
  system = await startSystem({
    store: "sqlite",
    gatewayEnv: { IDLE_CHECK_INTERVAL_MS: String(IDLE_CHECK_INTERVAL_MS) },
  });
  extraAgents.push(...(await Promise.all([startAgent(), startAgent()])));
  for (const agent of extraAgents) await system.addHost(agent.address);
});

afterAll(async () => {
  await Promise.allSettled(extraAgents.map((agent) => agent.stop()));
  await system?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function createSession(): Promise<{ id: string; createdAt: number }> {
  const res = await system.api("/browsers", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ timeout_seconds: TIMEOUT_SECONDS }),
  });
  expect(res.status).toBe(200);
  return { id: ((await res.json()) as { session_id: string }).session_id, createdAt: Date.now() };
}

async function isActive(id: string): Promise<boolean> {
  return (await system.api(`/browsers/${id}`)).status === 200;
}

describe("idle timeout", () => {
  it.concurrent("ends a session idle past its timeout_seconds and frees its host", { timeout: 30_000 }, async () => {
    const session = await createSession();
    const host = (await system.store.hosts.list()).find((h) => h.sessionId === session.id);
    expect(host).toBeDefined();
    while (await isActive(session.id)) {
      expect(Date.now() - session.createdAt).toBeLessThan(TIMEOUT_SECONDS * 1000 + 5_000);
      await sleep(100);
    }
    expect(Date.now() - session.createdAt).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000);
    expect((await system.store.hosts.find(host?.address ?? ""))?.sessionId).toBeNull();
    const ended = await system.api(`/browsers/${session.id}?include_deleted=true`);
    expect(await ended.json()).toMatchObject({ session_id: session.id, deleted_at: expect.any(String) });
  });

  it.concurrent("counts file_info as activity, keeping a session in use past its timeout", {
    timeout: 30_000,
  }, async () => {
    const session = await createSession();
    while (Date.now() - session.createdAt < TIMEOUT_SECONDS * 1000 + 3_000) {
      expect((await system.api(`/browsers/${session.id}/fs/file_info?path=/`)).status).toBe(200);
      await sleep(2_000);
    }
    expect(await isActive(session.id)).toBe(true);
    await system.api(`/browsers/${session.id}`, { method: "DELETE" });
  });
});
