import { Gauge } from "prom-client";
import { registry } from "./registry.ts";

const healthy = new Gauge({
  name: "gateway_host_healthy",
  help: "1 when the host agent at this address passed its last health check, 0 when it failed",
  labelNames: ["host"] as const,
  registers: [registry],
});

/** Records the outcome of a health check of the host agent at `address` (host:port). */
export function setHostHealth(address: string, isHealthy: boolean): void {
  healthy.set({ host: address }, isHealthy ? 1 : 0);
}

/** Drops a host that this gateway no longer knows, so its last value does not linger. */
export function forgetHostHealth(address: string): void {
  healthy.remove({ host: address });
}
