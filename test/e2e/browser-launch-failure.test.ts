import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "../support/processes.ts";

/**
 * A host whose Chromium cannot start (here a "browser" that exits at once) must not take sessions:
 * otherwise every create, and every retry of the official client, would land on it and fail while
 * other hosts sit idle.
 */

let dataDir: string;
let store: Store;
let agent: AgentProcess;
let gateway: GatewayProcess;
let apiKey: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "launch-failure-"));
  agent = await startAgent({ AGENT_CHROMIUM_PATH: "/bin/false" });
  store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
  gateway = await startGatewayProcess({ DATA_DIR: dataDir, HOST_AGENTS: agent.address, HOST_CHECK_INTERVAL_MS: "200" });
  ({ key: apiKey } = await createApiKey(store, "org-launch-failure", "launch failure"));
});

afterAll(async () => {
  await gateway?.stop();
  await agent?.stop();
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a host that cannot launch Chromium", () => {
  it("says it does not serve, so the gateway hands it no session", async () => {
    await agent.waitForLog((line) => line.msg === "cannot launch browsers");
    const deadline = Date.now() + 10_000;
    while ((await store.hosts.find(agent.address))?.health !== "not_serving") {
      if (Date.now() > deadline) throw new Error("the host was not marked not_serving");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const res = await fetch(`${gateway.url}/browsers`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: "no_host_available" });
  });
});
