import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * The process's one registry. Each replica exposes only its own counts;
 * Prometheus scrapes every replica and sums them, so nothing is shared.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Seconds, from 5 ms up to the longest press_key hold (300 s by default). */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 300];
