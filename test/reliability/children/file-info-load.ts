/**
 * Load for R2, run inside the gateway's network namespace: LOAD_WORKERS workers each call file_info one request
 * at a time until LOAD_DURATION_MS is over. Prints one JSON line "ready", then one JSON line with every
 * request's outcome. A request unanswered after LOAD_TIMEOUT_MS is cut off and reported with status 0.
 *
 * Environment: LOAD_URL, LOAD_API_KEY, LOAD_SESSION, LOAD_WORKERS, LOAD_DURATION_MS, LOAD_TIMEOUT_MS.
 */

export interface FileInfoOutcome {
  worker: number;
  status: number;
  code?: string;
  retry?: string | null;
  /** Date.now() when the request was sent: the same clock as the test process's. */
  startedAt: number;
  ms: number;
}

const url = process.env.LOAD_URL as string;
const apiKey = process.env.LOAD_API_KEY as string;
const session = process.env.LOAD_SESSION as string;
const workers = Number(process.env.LOAD_WORKERS);
const durationMs = Number(process.env.LOAD_DURATION_MS);
const timeoutMs = Number(process.env.LOAD_TIMEOUT_MS);

const outcomes: FileInfoOutcome[] = [];
const until = Date.now() + durationMs;

async function work(worker: number): Promise<void> {
  while (Date.now() < until) {
    const startedAt = Date.now();
    const started = performance.now();
    try {
      const res = await fetch(`${url}/browsers/${session}/fs/file_info?path=/`, {
        headers: { authorization: `Bearer ${apiKey}` },
        signal: AbortSignal.timeout(timeoutMs),
      });
      const body = (await res.json()) as { code?: string };
      outcomes.push({
        worker,
        status: res.status,
        code: body.code,
        retry: res.headers.get("x-should-retry"),
        startedAt,
        ms: performance.now() - started,
      });
    } catch (error) {
      outcomes.push({ worker, status: 0, code: String(error), startedAt, ms: performance.now() - started });
    }
  }
}

// One request first: Node loads its fetch implementation on first use, which on a busy machine took
// long enough for the test's fault to come and go before the load had sent anything.
await fetch(`${url}/healthz`);
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
await Promise.all(Array.from({ length: workers }, (_, worker) => work(worker)));
process.stdout.write(`${JSON.stringify({ outcomes })}\n`);
