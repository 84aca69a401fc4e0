import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { runLoad } from "./lib/load.ts";
import { sequentialPost } from "./lib/load-spec.ts";
import { round, timeCommand } from "./lib/measure.ts";
import { summarize } from "./lib/stats.ts";

/**
 * B13: click latency, one click per request, one request at a time, through the full path (HTTP → gateway →
 * gRPC → agent → XTEST motion, press and release, confirmed by the X server), against `xdotool click 1` exec'd
 * per click on the same display (which clicks where the pointer is: it sends no motion).
 */
export async function b13Click(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const { display } = await env.display();
  const tenant = await env.tenant("sqlite");
  const gateway = await env.gateway("gateway-sqlite", "sqlite");
  const perRound = Math.ceil(settings.latencySamples / settings.latencyRounds);
  // A point of the recorder window, away from its edge: clicks there change nothing.
  const body = JSON.stringify({ x: 200, y: 200 });
  const spec = sequentialPost(
    `${gateway.url}/browsers/${tenant.sessionName}/computer/click_mouse`,
    body,
    { amount: perRound, warmup: settings.latencyWarmup },
    tenant.apiKey,
  );
  const xdotoolEnv = { ...process.env, DISPLAY: display };
  const plainRuns = Math.min(settings.latencySamples, settings.smoke ? 50 : 400);
  const ours: number[] = [];
  const plain: number[] = [];
  await timeCommand("xdotool", ["click", "1"], Math.min(20, settings.latencyWarmup), xdotoolEnv);
  for (let r = 1; r <= settings.latencyRounds; r++) {
    const result = await runLoad(spec);
    if (result.ok !== perRound) throw new Error(`B13: ${result.ok} clicks answered 200`);
    ours.push(...(result.latenciesMs ?? []));
    plain.push(
      ...(await timeCommand("xdotool", ["click", "1"], Math.ceil(plainRuns / settings.latencyRounds), xdotoolEnv)),
    );
    progress(`B13: round ${r}/${settings.latencyRounds}: click_mouse p50 ${result.latency.p50Ms.toFixed(3)} ms`);
  }
  const oursSummary = summarize(ours);
  const plainSummary = summarize(plain);
  const samples = `${oursSummary.count} requests + ${plainSummary.count} runs`;
  return {
    id: "B13",
    title: "click_mouse latency, full path (HTTP → gateway → gRPC → agent → XTEST, confirmed)",
    metrics: [
      metric({
        id: "B13",
        what: "click_mouse p50",
        unit: "ms",
        ours: round(oursSummary.p50Ms, 3),
        baseline: { name: "`xdotool click 1` p50", value: round(plainSummary.p50Ms, 3) },
        samples,
      }),
      metric({
        id: "B13",
        what: "click_mouse p99",
        unit: "ms",
        ours: round(oursSummary.p99Ms, 3),
        baseline: { name: "`xdotool click 1` p99", value: round(plainSummary.p99Ms, 3) },
        samples,
      }),
    ],
    notes: [
      "One request at a time over one keep-alive connection, each a motion to (200, 200) and a left press and " +
        `release; ${settings.latencyWarmup} warm-up requests per round, ${settings.latencyRounds} round(s). ` +
        "`xdotool click 1` (no motion, default 12 ms --delay between press and release for repeats only) is exec'd " +
        "by the runner per click, as a client shelling out would.",
    ],
    details: { ours: oursSummary, xdotool: plainSummary },
    seconds: (performance.now() - started) / 1000,
  };
}
