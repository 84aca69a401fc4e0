/**
 * Load for R3, run as its own process so the test process may block while PostgreSQL restarts. Each worker
 * renames its own proxy, one request at a time, with names never used before; after its first failure it moves
 * on to a second proxy, so the first one keeps the last name it was given before the outage. Prints one JSON
 * line "ready", then, when LOAD_DURATION_MS is over, one JSON line with every request's outcome.
 *
 * Environment: LOAD_URL, LOAD_API_KEY, LOAD_WORKERS (JSON [[proxyBefore, proxyAfter], …]), LOAD_DURATION_MS,
 * LOAD_TIMEOUT_MS.
 */

export interface RenameOutcome {
  worker: number;
  proxy: string;
  name: string;
  status: number;
  code?: string;
  retry?: string | null;
  startedAt: number;
  ms: number;
}

const url = process.env.LOAD_URL as string;
const apiKey = process.env.LOAD_API_KEY as string;
const workers = JSON.parse(process.env.LOAD_WORKERS as string) as [string, string][];
const durationMs = Number(process.env.LOAD_DURATION_MS);
const timeoutMs = Number(process.env.LOAD_TIMEOUT_MS);

const outcomes: RenameOutcome[] = [];
const until = Date.now() + durationMs;

async function work(worker: number, [before, after]: [string, string]): Promise<void> {
  let proxy = before;
  for (let seq = 0; Date.now() < until; seq++) {
    const name = `w${worker}-${seq}`;
    const startedAt = Date.now();
    const started = performance.now();
    let outcome: RenameOutcome;
    try {
      const res = await fetch(`${url}/proxies/${proxy}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ name }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const body = (await res.json()) as { code?: string; name?: string };
      outcome = {
        worker,
        proxy,
        name,
        status: res.status,
        code: body.code,
        retry: res.headers.get("x-should-retry"),
        startedAt,
        ms: performance.now() - started,
      };
    } catch (error) {
      // A hang (the timeout fired) or a dropped connection: status 0.
      outcome = { worker, proxy, name, status: 0, code: String(error), startedAt, ms: performance.now() - started };
    }
    outcomes.push(outcome);
    if (outcome.status !== 200 && proxy === before) proxy = after;
  }
}

// One request first: Node loads its fetch implementation on first use, which on a busy machine took
// long enough for the test's fault to come and go before the load had sent anything.
await fetch(`${url}/healthz`);
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
await Promise.all(workers.map((pair, worker) => work(worker, pair)));
process.stdout.write(`${JSON.stringify({ outcomes })}\n`);
