import { status } from "@grpc/grpc-js";
import { Counter, Histogram } from "prom-client";
import { registry } from "./registry.ts";

const labelNames = ["method", "code"] as const;

const calls = new Counter({
  name: "hostagent_rpc_calls_total",
  help: "gRPC calls served, by method and gRPC status code",
  labelNames,
  registers: [registry],
});

const duration = new Histogram({
  name: "hostagent_rpc_duration_seconds",
  help: "Time to serve a gRPC call, by method and gRPC status code",
  labelNames,
  // press_key holds keys for up to its duration (300 s by default).
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 300],
  registers: [registry],
});

const fileInfoCalls = new Counter({
  name: "hostagent_file_info_calls_total",
  help: "file_info calls served, by gRPC status code (OK, NOT_FOUND, PERMISSION_DENIED, ...)",
  labelNames: ["code"] as const,
  registers: [registry],
});

/** Records one finished call of the HostAgent service. */
export function recordRpcCall(method: string, code: status, durationMs: number): void {
  const labels = { method, code: status[code] ?? "UNKNOWN" };
  calls.inc(labels);
  duration.observe(labels, durationMs / 1000);
  if (method === "FileInfo") fileInfoCalls.inc({ code: labels.code });
}
