import { Counter, Gauge } from "prom-client";
import { registry } from "../../metrics/registry.ts";
import type { CloseReason } from "./close-reasons.ts";

const openSockets = new Gauge({
  name: "gateway_cdp_sockets",
  help: "CDP WebSockets open on this replica",
  registers: [registry],
});

/** Counted per message as plain numbers, handed to prom-client only when scraped: the hot path stays a sum. */
const carried = { to_browser: 0, to_client: 0 };

new Counter({
  name: "gateway_cdp_bytes_total",
  help: "CDP message bytes carried, by direction (to_browser: from clients; to_client: from browsers)",
  labelNames: ["direction"] as const,
  registers: [registry],
  collect() {
    this.reset();
    this.inc({ direction: "to_browser" }, carried.to_browser);
    this.inc({ direction: "to_client" }, carried.to_client);
  },
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

export const cdpMetrics = {
  opened: () => openSockets.inc(),
  closed: (reason: CloseReason) => {
    openSockets.dec();
    closes.inc({ reason });
  },
  refused: (status: number) => refusals.inc({ status: String(status) }),
  toBrowser: (count: number) => {
    carried.to_browser += count;
  },
  toClient: (count: number) => {
    carried.to_client += count;
  },
};
