import { Gauge } from "prom-client";
import { registry } from "./registry.ts";

const healthy = new Gauge({
  name: "gateway_host_healthy",
  help: "1 when the host agent at this address passed its last health check, 0 when it failed",
  labelNames: ["host"] as const,
  registers: [registry],
});

const reported = new Set<string>();

/** Records the outcome of a health check of the host agent at `address` (host:port). */
export function setHostHealth(address: string, isHealthy: boolean): void {
  reported.add(address);
  healthy.set({ host: address }, isHealthy ? 1 : 0);
}

/** Drops hosts that were removed from the registry, so their last value does not linger. */
export function keepHostHealthOf(known: readonly string[]): void {
  const keep = new Set(known);
  for (const address of reported) {
    if (keep.has(address)) continue;
    reported.delete(address);
    healthy.remove({ host: address });
  }
}
