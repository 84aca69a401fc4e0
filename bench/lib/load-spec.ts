/** One stream of requests against one server. */
export interface LoadTarget {
  url: string;
  connections: number;
  method: "GET" | "POST" | "PATCH";
  headers?: Record<string, string>;
  body?: string;
  /** Request paths taken in turn instead of the url's path, so writes spread over many rows. */
  paths?: string[];
  /** A body built per request; `{n}` becomes a counter, so no two renames send the same name. */
  bodyTemplate?: string;
}

export interface LoadSpec {
  /** All targets run at the same time (for B6, one per replica); results are summed. */
  targets: LoadTarget[];
  /** Stop after this many responses per target… */
  amount?: number;
  /** …or after this many seconds. */
  durationS?: number;
  /** Same targets run first, results discarded: connections, JIT and caches are warm when measuring. */
  warmup?: { amount?: number; durationS?: number };
  /** Return every measured latency, so rounds can be pooled into one distribution. */
  keepLatencies?: boolean;
}

export interface LatencySummary {
  count: number;
  meanMs: number;
  minMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface LoadResult {
  /** Responses with a 2xx status in the measured phase. */
  ok: number;
  /** Responses with another status, connection errors and timeouts: any of them makes the result invalid. */
  failed: number;
  errors: string[];
  statusCodes: Record<string, number>;
  elapsedS: number;
  requestsPerS: number;
  latency: LatencySummary;
  latenciesMs?: number[];
}

/**
 * One client POSTing the JSON `body` to `url`, one request at a time, every latency kept: how the
 * latency benchmarks time a call. `apiKey` goes as a Bearer token; `warmup` requests come first.
 */
export function sequentialPost(
  url: string,
  body: string,
  counts: { amount: number; warmup?: number },
  apiKey?: string,
): LoadSpec {
  return {
    targets: [
      {
        url,
        connections: 1,
        method: "POST",
        headers: { ...(apiKey && { authorization: `Bearer ${apiKey}` }), "content-type": "application/json" },
        body,
      },
    ],
    ...(counts.warmup !== undefined && { warmup: { amount: counts.warmup } }),
    amount: counts.amount,
    keepLatencies: true,
  };
}
