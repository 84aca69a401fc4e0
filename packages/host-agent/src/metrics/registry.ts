import { collectDefaultMetrics, Registry } from "prom-client";

/** The agent process's one registry, served on its own port apart from gRPC. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });
