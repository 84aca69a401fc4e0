import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/ports.ts";
import { startAgent } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";

const AGENT_TIMEOUT_MS = 800;
let system: System;
let silentServer: Server;
const silentSockets: Socket[] = [];

beforeAll(async () => {
  system = await startSystem({ store: "sqlite", gatewayEnv: { AGENT_TIMEOUT_MS: String(AGENT_TIMEOUT_MS) } });
  // Accepts TCP connections and never says a word: a hung host.
  silentServer = createServer((socket) => silentSockets.push(socket));
  await new Promise<void>((resolve) => silentServer.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  for (const socket of silentSockets) socket.destroy();
  silentServer?.close();
  await system?.stop();
});

async function timedFileInfo(session: string): Promise<{ res: Response; ms: number }> {
  const started = performance.now();
  const res = await system.api(`/browsers/${session}/fs/file_info?path=/`);
  return { res, ms: performance.now() - started };
}

describe("host agent failures", () => {
  it("answers 502 host_unavailable within 2 s when nothing listens at the host's address", async () => {
    const session = await system.newSession(system.organizationId, "nobody-home", `127.0.0.1:${await freePort()}`);
    const { res, ms } = await timedFileInfo(session.name);
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: "host_unavailable" });
    expect(ms).toBeLessThan(2_000);
  });

  it("answers 502 host_unavailable within 2 s after the host agent stopped", async () => {
    const agent = await startAgent();
    const session = await system.newSession(system.organizationId, "stopped-agent", agent.address, {});
    expect((await timedFileInfo(session.name)).res.status).toBe(200);
    await agent.stop();
    const { res, ms } = await timedFileInfo(session.name);
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: "host_unavailable" });
    expect(res.headers.get("x-should-retry")).toBe("true");
    expect(ms).toBeLessThan(2_000);
  });

  it("answers 504 host_timeout after the configured deadline when the host never answers", async () => {
    const address = silentServer.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const session = await system.newSession(system.organizationId, "hung-agent", `127.0.0.1:${port}`);
    const { res, ms } = await timedFileInfo(session.name);
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ code: "host_timeout" });
    expect(ms).toBeGreaterThanOrEqual(AGENT_TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(AGENT_TIMEOUT_MS + 2_000);
  });
});
