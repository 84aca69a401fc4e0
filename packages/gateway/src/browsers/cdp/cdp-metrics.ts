import { Counter, Gauge } from "prom-client";
import { registry } from "../../metrics/registry.ts";
import type { CloseReason } from "./close-reasons.ts";

const openSockets = new Gauge({
  name: "gateway_cdp_sockets",
  help: "CDP WebSockets open on this replica",
  registers: [registry],
});

const bytes = new Counter({
  name: "gateway_cdp_bytes_total",
  help: "CDP message bytes carried, by direction (to_browser: from clients; to_client: from browsers)",
  labelNames: ["direction"] as const,
  registers: [registry],
});

const closes = new Counter({
  name: "gateway_cdp_closes_total",
  help: "CDP WebSockets closed, by reason",
  labelNames: ["reason"] as const,
  registers: [registry],
});

const refusals = new Counter({
  name: "gateway_cdp_refusals_total",
  help: "CDP WebSocket upgrades refused, by the HTTP status answered",
  labelNames: ["status"] as const,
  registers: [registry],
});

// Bound once: these are counted per message.
const toBrowser = bytes.labels("to_browser");
const toClient = bytes.labels("to_client");

export const cdpMetrics = {
  opened: () => openSockets.inc(),
  closed: (reason: CloseReason) => {
    openSockets.dec();
    closes.inc({ reason });
  },
  refused: (status: number) => refusals.inc({ status: String(status) }),
  toBrowser: (count: number) => toBrowser.inc(count),
  toClient: (count: number) => toClient.inc(count),
};
