import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentProcess, startAgent } from "../support/processes.ts";
import { type MetricFamily, sampleValue, scrape } from "../support/prometheus.ts";
import { type System, startSystem } from "../support/system.ts";
import { startXvfb, type Xvfb } from "../support/xvfb.ts";

let xvfb: Xvfb;
let system: System;
let headless: AgentProcess;

beforeAll(async () => {
  xvfb = await startXvfb();
  system = await startSystem({ store: "sqlite", agentEnv: { DISPLAY: xvfb.display } });
  headless = await startAgent({ DISPLAY: "" });
});

afterAll(async () => {
  await headless?.stop();
  await system?.stop();
  await xvfb?.stop();
});

function agentMetrics(agent: AgentProcess = system.agent): Promise<Map<string, MetricFamily>> {
  if (!agent.metricsUrl) throw new Error("the agent serves no metrics");
  return scrape(agent.metricsUrl);
}

/** How much `name{labels}` moved on `agent` while `action` ran. */
async function delta(
  name: string,
  labels: Record<string, string>,
  action: () => Promise<unknown>,
  agent: AgentProcess = system.agent,
): Promise<number> {
  const before = sampleValue(await agentMetrics(agent), name, labels);
  await action();
  return sampleValue(await agentMetrics(agent), name, labels) - before;
}

function fileInfo(path: string): Promise<Response> {
  return system.api(`/browsers/${system.session.name}/fs/file_info?path=${encodeURIComponent(path)}`);
}

function pressKey(session: string, body: unknown): Promise<Response> {
  return system.api(`/browsers/${session}/computer/press_key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("the host agent's /metrics", () => {
  it("serves the Prometheus text format on its own port", async () => {
    expect(system.agent.metricsUrl).not.toContain(`:${system.agent.port}/`);
    const families = await agentMetrics();
    expect(families.get("hostagent_rpc_calls_total")?.type).toBe("counter");
    expect(families.get("hostagent_rpc_duration_seconds")?.type).toBe("histogram");
    expect(families.get("hostagent_file_info_calls_total")?.type).toBe("counter");
    expect(families.get("hostagent_key_events_total")?.type).toBe("counter");
    expect(families.get("hostagent_x_reconnects_total")?.type).toBe("counter");
  });

  it("answers 404 for any other path", async () => {
    const url = new URL(system.agent.metricsUrl ?? "");
    url.pathname = "/";
    expect((await fetch(url)).status).toBe(404);
  });

  it("counts file_info calls by status code", async () => {
    expect(
      await delta("hostagent_file_info_calls_total", { code: "OK" }, async () => {
        expect((await fileInfo("/")).status).toBe(200);
        expect((await fileInfo("/tmp")).status).toBe(200);
      }),
    ).toBe(2);
    expect(
      await delta("hostagent_file_info_calls_total", { code: "NOT_FOUND" }, async () => {
        expect((await fileInfo("/no/such/file")).status).toBe(404);
      }),
    ).toBe(1);
  });

  it("counts and times rpc calls by method and status code", async () => {
    const labels = { method: "FileInfo", code: "OK" };
    const before = await agentMetrics();
    expect((await fileInfo("/")).status).toBe(200);
    const after = await agentMetrics();
    expect(
      sampleValue(after, "hostagent_rpc_calls_total", labels) -
        sampleValue(before, "hostagent_rpc_calls_total", labels),
    ).toBe(1);
    const count = "hostagent_rpc_duration_seconds_count";
    expect(sampleValue(after, count, labels) - sampleValue(before, count, labels)).toBe(1);
  });

  it("counts a press and a release for every key of a successful press_key, hold keys included", async () => {
    const moved = await delta("hostagent_key_events_total", {}, async () => {
      // a, ctrl, b and the held shift: four keys down, four up.
      expect((await pressKey(system.session.name, { keys: ["a", "ctrl+b"], hold_keys: ["shift"] })).status).toBe(200);
    });
    expect(moved).toBe(8);
  });

  it("counts no key events for a press_key the host could not carry out", async () => {
    const session = await system.newSession(system.organizationId, "headless", headless.address, {});
    const labels = { method: "PressKey", code: "FAILED_PRECONDITION" };
    const before = await agentMetrics(headless);
    expect((await pressKey(session.id, { keys: ["a"] })).status).toBe(503);
    const after = await agentMetrics(headless);
    expect(sampleValue(after, "hostagent_key_events_total") - sampleValue(before, "hostagent_key_events_total")).toBe(
      0,
    );
    expect(
      sampleValue(after, "hostagent_rpc_calls_total", labels) -
        sampleValue(before, "hostagent_rpc_calls_total", labels),
    ).toBe(1);
  });

  it("serves no metrics port when AGENT_METRICS_LISTEN is off", async () => {
    const agent = await startAgent({ AGENT_METRICS_LISTEN: "off" });
    try {
      expect(agent.metricsUrl).toBeUndefined();
    } finally {
      await agent.stop();
    }
  });

  // Last: it restarts the X server under the other tests' feet.
  it("counts a reconnection to an X server that restarted", async () => {
    expect((await pressKey(system.session.name, { keys: ["a"] })).status).toBe(200);
    const moved = await delta("hostagent_x_reconnects_total", {}, async () => {
      const display = xvfb.display;
      await xvfb.stop();
      xvfb = await startXvfb({ display });
      expect((await pressKey(system.session.name, { keys: ["a"] })).status).toBe(200);
    });
    expect(moved).toBe(1);
  });
});
