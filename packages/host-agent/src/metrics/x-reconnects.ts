import { Counter } from "prom-client";
import { registry } from "./registry.ts";

/**
 * Incremented by the keyboard each time it opens a new X connection after
 * losing one (`xReconnects.inc()`); not on the first connection.
 */
export const xReconnects = new Counter({
  name: "hostagent_x_reconnects_total",
  help: "Times the agent reconnected to the X display after losing its connection",
  registers: [registry],
});
