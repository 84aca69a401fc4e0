// The load generator runs here, in its own process, so generating requests never takes CPU time
// from inside a measured process. Reads a LoadSpec as JSON from argv, prints one LoadResult as JSON.
import autocannon, { type AutocannonRequest } from "autocannon";
import type { LoadResult, LoadSpec, LoadTarget } from "./load-spec.ts";
import { summarize } from "./stats.ts";

interface Phase {
  ok: number;
  failed: number;
  /** The first few distinct connection errors, so a failed run says why. */
  errors: string[];
  statusCodes: Record<string, number>;
  latencies: number[];
  elapsedS: number;
}

function runTarget(target: LoadTarget, stop: { amount?: number; durationS?: number }, phase: Phase): Promise<void> {
  let counter = 0;
  const dynamic = target.paths !== undefined || target.bodyTemplate !== undefined;
  const request: AutocannonRequest = { method: target.method };
  // autocannon treats a present-but-undefined key as set, so only defined ones go in.
  if (target.headers) request.headers = target.headers;
  if (target.body !== undefined) request.body = target.body;
  if (dynamic) {
    // Called for every request; without it autocannon reuses one prebuilt buffer.
    request.setupRequest = (req) => {
      const n = counter++;
      if (target.paths) req.path = target.paths[n % target.paths.length];
      if (target.bodyTemplate) req.body = target.bodyTemplate.replaceAll("{n}", String(n));
      return req;
    };
  }
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: target.connections,
        // autocannon rejects a key that is present but undefined.
        ...(stop.amount === undefined ? { duration: stop.durationS } : { amount: stop.amount }),
        requests: [request],
        timeout: 30,
      },
      (error, result) => {
        if (error) reject(error);
        else {
          phase.failed += result.errors + result.timeouts;
          resolve();
        }
      },
    );
    // autocannon's own latency histogram keeps whole milliseconds only; the event carries the
    // hrtime-based float, which is what sub-millisecond percentiles need.
    instance.on("reqError", (error: Error) => {
      const text = `${error.name}: ${error.message}`;
      if (phase.errors.length < 5 && !phase.errors.includes(text)) phase.errors.push(text);
    });
    instance.on("response", (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      phase.statusCodes[statusCode] = (phase.statusCodes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) {
        phase.ok++;
        phase.latencies.push(responseTime);
      } else {
        phase.failed++;
      }
    });
  });
}

async function runPhase(spec: LoadSpec, stop: { amount?: number; durationS?: number }): Promise<Phase> {
  const phase: Phase = { ok: 0, failed: 0, errors: [], statusCodes: {}, latencies: [], elapsedS: 0 };
  const started = performance.now();
  await Promise.all(spec.targets.map((target) => runTarget(target, stop, phase)));
  phase.elapsedS = (performance.now() - started) / 1000;
  return phase;
}

const spec = JSON.parse(process.argv[2] ?? "") as LoadSpec;
if (spec.warmup) await runPhase(spec, spec.warmup);
const measured = await runPhase(spec, { amount: spec.amount, durationS: spec.durationS });
const result: LoadResult = {
  ok: measured.ok,
  failed: measured.failed,
  errors: measured.errors,
  statusCodes: measured.statusCodes,
  elapsedS: measured.elapsedS,
  requestsPerS: measured.ok / measured.elapsedS,
  latency: summarize(measured.latencies),
  latenciesMs: spec.keepLatencies ? measured.latencies : undefined,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
