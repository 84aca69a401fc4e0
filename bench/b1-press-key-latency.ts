import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { runLoad } from "./lib/load.ts";
import { type LoadSpec, sequentialPost } from "./lib/load-spec.ts";
import { round, timeCommand } from "./lib/measure.ts";
import { summarize } from "./lib/stats.ts";

const KEY = "a";

/**
 * B1: one key per request, one request at a time (latency, not throughput), through the full path:
 * HTTP → gateway → gRPC → agent → XTEST, answered after the X server confirmed. The recorder window
 * must have received every press and release, or the run is an error.
 */
export async function b1PressKeyLatency(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const { recorder, display } = await env.display();
  const xdotoolEnv = { ...process.env, DISPLAY: display };
  const tenant = await env.tenant("sqlite");
  const gateway = await env.gateway("gateway-sqlite", "sqlite");
  const xdotoolServer = await env.baseline("xdotool-server");
  const floor = await env.floor();
  const body = JSON.stringify({ keys: [KEY] });
  const perRound = Math.ceil(settings.latencySamples / settings.latencyRounds);

  const counts = { amount: perRound, warmup: settings.latencyWarmup };
  const sides: { name: string; spec: LoadSpec }[] = [
    {
      name: "ours",
      spec: sequentialPost(
        `${gateway.url}/browsers/${tenant.sessionName}/computer/press_key`,
        body,
        counts,
        tenant.apiKey,
      ),
    },
    { name: "xdotool server", spec: sequentialPost(`${xdotoolServer.url}/computer/press_key`, body, counts) },
    { name: "floor", spec: sequentialPost(`${floor.url}/press_key`, body, counts) },
  ];

  const latencies: Record<string, number[]> = { ours: [], "xdotool server": [], floor: [] };
  for (let r = 1; r <= settings.latencyRounds; r++) {
    for (const side of sides) {
      recorder.clear();
      const result = await runLoad(side.spec);
      // Every request is one press and one release in the recorder window.
      await recorder.waitForEvents(2 * (settings.latencyWarmup + perRound), 15_000);
      latencies[side.name]?.push(...(result.latenciesMs ?? []));
      progress(
        `B1: round ${r}/${settings.latencyRounds} ${side.name}: p50 ${result.latency.p50Ms.toFixed(3)} ms, ` +
          `p99 ${result.latency.p99Ms.toFixed(3)} ms (${result.ok} requests)`,
      );
    }
  }

  progress(`B1: plain \`xdotool key ${KEY}\`, ${settings.latencySamples} runs`);
  await timeCommand("xdotool", ["key", KEY], Math.min(20, settings.latencyWarmup), xdotoolEnv);
  recorder.clear();
  const plainTimes = await timeCommand("xdotool", ["key", KEY], settings.latencySamples, xdotoolEnv);
  await recorder.waitForEvents(2 * settings.latencySamples, 15_000);
  recorder.clear();

  const ours = summarize(latencies.ours ?? []);
  const server = summarize(latencies["xdotool server"] ?? []);
  const plain = summarize(plainTimes);
  const bare = summarize(latencies.floor ?? []);
  progress(`B1: plain xdotool key: p50 ${plain.p50Ms.toFixed(3)} ms, p99 ${plain.p99Ms.toFixed(3)} ms`);
  const samples = `${ours.count} + ${server.count} requests`;

  return {
    id: "B1",
    title: "press_key latency, full path (HTTP → gateway → gRPC → agent → XTEST, confirmed)",
    metrics: [
      metric({
        id: "B1",
        what: "press_key p50",
        unit: "ms",
        ours: round(ours.p50Ms, 3),
        baseline: { name: "xdotool HTTP server p50", value: round(server.p50Ms, 3) },
        target: { on: "ratio", op: "<=", value: 0.1 },
        samples,
      }),
      metric({
        id: "B1",
        what: "press_key p99",
        unit: "ms",
        ours: round(ours.p99Ms, 3),
        baseline: { name: "xdotool HTTP server p99", value: round(server.p99Ms, 3) },
        samples,
      }),
      metric({
        id: "B1",
        what: "floor p50: bare http → bare grpc-js → same XTEST code",
        unit: "ms",
        ours: round(bare.p50Ms, 3),
        baseline: { name: "xdotool HTTP server p50", value: round(server.p50Ms, 3) },
        samples: `${bare.count} + ${server.count} requests`,
      }),
      metric({
        id: "B1",
        what: "press_key p50 vs plain xdotool",
        unit: "ms",
        ours: round(ours.p50Ms, 3),
        baseline: { name: "`xdotool key` p50", value: round(plain.p50Ms, 3) },
        samples: `${ours.count} + ${plain.count} runs`,
      }),
      metric({
        id: "B1",
        what: "press_key p99 vs plain xdotool",
        unit: "ms",
        ours: round(ours.p99Ms, 3),
        baseline: { name: "`xdotool key` p99", value: round(plain.p99Ms, 3) },
        samples: `${ours.count} + ${plain.count} runs`,
      }),
    ],
    notes: [
      `One request at a time over one keep-alive connection, key "${KEY}", ${settings.latencyWarmup} warm-up requests per round, ` +
        `${settings.latencyRounds} alternating round(s) per side. Plain \`xdotool key\` (default 12 ms --delay) is exec'd by the runner.`,
      "Every press and release was received by the focused recorder window, on every side.",
      "The floor row is the same two-process design with nothing else: a bare node:http server forwarding over one " +
        "raw-buffer grpc-js channel to a bare grpc-js server that presses with the agent's own keyboard code " +
        "(bench/baselines/floor-*.ts). No Express, auth, store, validation, logging or metrics. Its ratio is the best " +
        "any gateway → agent design on Node + grpc-js can reach on this machine.",
    ],
    details: { ours, xdotoolServer: server, plainXdotool: plain, floor: bare },
    seconds: (performance.now() - started) / 1000,
  };
}
