import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/ports.ts";
import { type MetricFamily, sampleValue, scrape } from "../support/prometheus.ts";
import { type System, startSystem } from "../support/system.ts";

const FILE_INFO_ROUTE = "/browsers/:id_or_name/fs/file_info";

let system: System;

beforeAll(async () => {
  system = await startSystem({ store: "sqlite" });
});

afterAll(async () => {
  await system?.stop();
});

function gatewayMetrics(): Promise<Map<string, MetricFamily>> {
  return scrape(`${system.gateway.url}/metrics`);
}

function fileInfo(path: string): Promise<Response> {
  return system.api(`/browsers/${system.session.name}/fs/file_info?path=${encodeURIComponent(path)}`);
}

/** How much `name{labels}` moved while `action` ran. */
async function delta(name: string, labels: Record<string, string>, action: () => Promise<unknown>): Promise<number> {
  const before = sampleValue(await gatewayMetrics(), name, labels);
  await action();
  return sampleValue(await gatewayMetrics(), name, labels) - before;
}

describe("GET /metrics on the gateway", () => {
  it("answers without an API key in the Prometheus text format", async () => {
    const res = await fetch(`${system.gateway.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = await gatewayMetrics();
    expect(families.get("gateway_http_requests_total")?.type).toBe("counter");
    expect(families.get("gateway_http_request_duration_seconds")?.type).toBe("histogram");
    expect(families.get("gateway_host_agent_calls_total")?.type).toBe("counter");
    expect(families.get("gateway_host_agent_call_duration_seconds")?.type).toBe("histogram");
    expect(families.get("gateway_host_healthy")?.type).toBe("gauge");
  });

  it("reports a host that passed its health check as healthy", async () => {
    expect(sampleValue(await gatewayMetrics(), "gateway_host_healthy", { host: system.agent.address })).toBe(1);
  });

  it("counts HTTP requests under the route pattern and status", async () => {
    const labels = { method: "GET", route: FILE_INFO_ROUTE, status: "200" };
    const moved = await delta("gateway_http_requests_total", labels, async () => {
      for (let i = 0; i < 3; i++) expect((await fileInfo("/")).status).toBe(200);
    });
    expect(moved).toBe(3);
  });

  it("counts error answers under their own status", async () => {
    const labels = { method: "GET", route: FILE_INFO_ROUTE, status: "404" };
    const moved = await delta("gateway_http_requests_total", labels, async () => {
      expect((await fileInfo("/no/such/file")).status).toBe(404);
    });
    expect(moved).toBe(1);
  });

  it("times HTTP requests in a latency histogram", async () => {
    const labels = { method: "GET", route: FILE_INFO_ROUTE, status: "200" };
    const before = await gatewayMetrics();
    expect((await fileInfo("/tmp")).status).toBe(200);
    const after = await gatewayMetrics();
    const count = (families: Map<string, MetricFamily>) =>
      sampleValue(families, "gateway_http_request_duration_seconds_count", labels);
    expect(count(after) - count(before)).toBe(1);
    const sum = (families: Map<string, MetricFamily>) =>
      sampleValue(families, "gateway_http_request_duration_seconds_sum", labels);
    expect(sum(after)).toBeGreaterThan(sum(before));
  });

  it("never puts a raw URL, session name or query into a label", async () => {
    expect((await fileInfo("/etc/hostname-probe")).status).toBe(404);
    expect((await system.api("/no/such/route/xyzzy")).status).toBe(404);
    const families = await gatewayMetrics();
    const values = [...families.values()].flatMap((family) =>
      family.samples.flatMap((sample) => Object.values(sample.labels)),
    );
    for (const leak of [system.session.name, system.session.id, "hostname-probe", "xyzzy", "?path"]) {
      expect(values.filter((value) => value.includes(leak))).toEqual([]);
    }
    expect(sampleValue(families, "gateway_http_requests_total", { route: "unmatched", status: "404" })).toBeGreaterThan(
      0,
    );
  });

  it("counts gRPC calls to host agents by method and status code", async () => {
    const ok = await delta("gateway_host_agent_calls_total", { method: "FileInfo", code: "OK" }, async () => {
      expect((await fileInfo("/")).status).toBe(200);
      expect((await fileInfo("/tmp")).status).toBe(200);
    });
    expect(ok).toBe(2);
    const missing = await delta(
      "gateway_host_agent_calls_total",
      { method: "FileInfo", code: "NOT_FOUND" },
      async () => {
        expect((await fileInfo("/no/such/file")).status).toBe(404);
      },
    );
    expect(missing).toBe(1);
  });

  it("counts a call to an unreachable host as UNAVAILABLE", async () => {
    const session = await system.newSession(system.organizationId, "gone", `127.0.0.1:${await freePort()}`);
    const labels = { method: "FileInfo", code: "UNAVAILABLE" };
    const moved = await delta("gateway_host_agent_calls_total", labels, async () => {
      expect((await system.api(`/browsers/${session.id}/fs/file_info?path=/`)).status).toBe(502);
    });
    expect(moved).toBe(1);
  });

  it("times gRPC calls to host agents in a latency histogram", async () => {
    const labels = { method: "FileInfo", code: "OK" };
    const moved = await delta("gateway_host_agent_call_duration_seconds_count", labels, async () => {
      expect((await fileInfo("/")).status).toBe(200);
    });
    expect(moved).toBe(1);
  });
});
