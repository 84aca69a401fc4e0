import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_VERSION } from "../../packages/host-agent/src/version.ts";
import { type AgentProcess, runCli, startAgent } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";
import { startXvfb, type Xvfb } from "../support/xvfb.ts";

let xvfb: Xvfb;
let system: System;
const agents: AgentProcess[] = [];
/** An idle host with a display (and no browser), beside the system's headless one. */
let displayAgent: AgentProcess;

beforeAll(async () => {
  xvfb = await startXvfb();
  system = await startSystem({ store: "sqlite" });
  displayAgent = await addAgent({ DISPLAY: xvfb.display });
});

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.stop()));
  await system?.stop();
  await xvfb?.stop();
});

async function addAgent(env: NodeJS.ProcessEnv = {}): Promise<AgentProcess> {
  const agent = await startAgent(env);
  agents.push(agent);
  await system.addHost(agent.address);
  return agent;
}

async function waitForHealth(address: string, health: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await system.store.hosts.find(address))?.health !== health) {
    if (Date.now() > deadline) throw new Error(`host ${address} did not become ${health}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function createSession(body: unknown = {}): Promise<Response> {
  return system.api("/browsers", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("host agents", () => {
  it("registers the agents of HOST_AGENTS when the gateway starts and finds them serving", async () => {
    expect(await system.store.hosts.find(system.agent.address)).toMatchObject({
      health: "serving",
      sessionId: system.session.id,
    });
  });

  it("records what an agent describes: version, display and screen size", async () => {
    expect((await system.store.hosts.find(displayAgent.address))?.description).toEqual({
      agentVersion: AGENT_VERSION,
      display: xvfb.display,
      screenWidth: 1024,
      screenHeight: 768,
    });
  });

  it("gives a session on a host with a display (and no browser) that host's screen as viewport and no CDP URL", async () => {
    const res = await createSession({ headless: false, viewport: { width: 1024, height: 768 } });
    expect(res.status).toBe(200);
    const session = (await res.json()) as { session_id: string };
    expect(session).toMatchObject({ headless: false, cdp_ws_url: "", viewport: { width: 1024, height: 768 } });
    await system.api(`/browsers/${session.session_id}`, { method: "DELETE" });
  });

  it("marks a stopped agent unreachable and places no session on it", async () => {
    const agent = await addAgent();
    await agent.stop();
    await waitForHealth(agent.address, "unreachable");
    const res = await createSession({ headless: true });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: "no_host_available" });
  });

  it("lists every host with the admin CLI, one JSON object a line", async () => {
    const lines = (await runCli(["hosts", "list"], system.storeEnv)).trim().split("\n");
    const listed = lines.map((line) => JSON.parse(line) as { address: string });
    expect(listed.map((h) => h.address).sort()).toEqual((await system.store.hosts.list()).map((h) => h.address).sort());
  });

  it("removes an idle host with the admin CLI and refuses to remove one holding a session", async () => {
    const agent = await addAgent();
    expect(await runCli(["hosts", "remove", agent.address], system.storeEnv)).toBe(`removed ${agent.address}\n`);
    expect(await system.store.hosts.find(agent.address)).toBeUndefined();
    await expect(runCli(["hosts", "remove", system.agent.address], system.storeEnv)).rejects.toThrow(
      /holds a browser session/,
    );
  });
});
