import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentProcess, startAgent } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";

/** An agent on a Unix socket (as the quick start runs them), dialled by the gateway as unix:/path. */

let dir: string;
let env: NodeJS.ProcessEnv;
let system: System;
let agent: AgentProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "agent-socket-"));
  env = { AGENT_LISTEN: `unix:${join(dir, "agent.sock")}`, AGENT_DATA_DIR: join(dir, "data") };
  system = await startSystem({ store: "sqlite", agentEnv: env });
  agent = system.agent;
});

afterAll(async () => {
  await agent?.stop();
  await system?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function fileInfo(session: string): Promise<Response> {
  return system.api(`/browsers/${session}/fs/file_info?path=/`);
}

describe("a host agent on a Unix socket", () => {
  it("serves the gateway, which dials it as unix:/path", async () => {
    expect(agent.address).toBe(env.AGENT_LISTEN);
    expect((await fileInfo(system.session.id)).status).toBe(200);
  });

  it("starts again on the same socket after a SIGKILL left the socket file behind", async () => {
    await agent.stop("SIGKILL");
    agent = await startAgent(env);
    const deadline = Date.now() + 10_000;
    let res: Response;
    for (;;) {
      res = await system.api("/browsers", { method: "POST" });
      if (res.status === 200 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(res.status).toBe(200);
    const { session_id } = (await res.json()) as { session_id: string };
    expect((await fileInfo(session_id)).status).toBe(200);
  });

  it("refuses to start on a socket another agent answers on", async () => {
    const second = startAgent({ ...env, AGENT_DATA_DIR: join(dir, "other") });
    await expect(second).rejects.toThrow(/another process listens on/);
  });
});
