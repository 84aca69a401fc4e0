import { HostAgent, RpcError } from "@browser-infra/contract";
import { Counter, Histogram } from "prom-client";
import type { HostAgentClient } from "../hosts/host-pool.ts";
import { LATENCY_BUCKETS, registry } from "./registry.ts";

const labelNames = ["method", "code"] as const;

const calls = new Counter({
  name: "gateway_host_agent_calls_total",
  help: "gRPC calls to host agents, by method and gRPC status code",
  labelNames,
  registers: [registry],
});

const duration = new Histogram({
  name: "gateway_host_agent_call_duration_seconds",
  help: "Latency of gRPC calls to host agents, by method and gRPC status code",
  labelNames,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

type AnyCall = (request: unknown, options: unknown) => Promise<unknown>;

/**
 * The same client, with every unary call counted and timed under its gRPC method name and status.
 * Streams (CDP) are measured where they are bridged: browsers/cdp/cdp-metrics.ts.
 */
export function withCallMetrics(client: HostAgentClient): HostAgentClient {
  const measured: Record<string, AnyCall> = {};
  for (const method of HostAgent.methods) {
    const call = (client as unknown as Record<string, AnyCall>)[method.localName];
    if (!call) throw new Error(`host agent client has no ${method.localName}`);
    if (method.methodKind !== "unary") {
      measured[method.localName] = call;
      continue;
    }
    measured[method.localName] = async (request, options) => {
      const started = process.hrtime.bigint();
      let code = "OK";
      try {
        return await call(request, options);
      } catch (error) {
        code = error instanceof RpcError ? error.codeName : "UNKNOWN";
        throw error;
      } finally {
        const labels = { method: method.name, code };
        calls.inc(labels);
        duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      }
    };
  }
  return measured as unknown as HostAgentClient;
}
