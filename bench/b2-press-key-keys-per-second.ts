import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { runLoad } from "./lib/load.ts";
import { sequentialPost } from "./lib/load-spec.ts";
import { round, timeCommand } from "./lib/measure.ts";
import { median, summarize } from "./lib/stats.ts";

const KEY_COUNT = 500;

/**
 * 500 keys typed as text would be: letters of both cases (the capitals need Shift), digits, space and
 * punctuation, all with a keycode in the default map, so neither side has to rebind a spare keycode.
 */
export function fiveHundredKeys(): string[] {
  const text = "The quick brown fox jumps over the lazy dog, 1234567890 times. ";
  const names: Record<string, string> = { " ": "space", ",": "comma", ".": "period" };
  const keys: string[] = [];
  for (let i = 0; keys.length < KEY_COUNT; i++) {
    const character = text[i % text.length] as string;
    keys.push(names[character] ?? character);
  }
  return keys;
}

/** X events a key produces: its press and release, plus Shift's around a capital. */
function eventsFor(keys: readonly string[]): number {
  return keys.reduce((sum, key) => sum + (/^[A-Z]$/.test(key) ? 4 : 2), 0);
}

/**
 * B2: one press_key request carrying 500 keys, answered after the X server confirmed them all,
 * against `xdotool key --delay 0` with the same 500 keys in one process (exec included, as a
 * server exec'ing it would pay it). Keys per second from the median of the repetitions.
 */
export async function b2PressKeyKeysPerSecond(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const { recorder, display } = await env.display();
  const tenant = await env.tenant("sqlite");
  const gateway = await env.gateway("gateway-sqlite", "sqlite");
  const keys = fiveHundredKeys();
  const xdotoolArgs = ["key", "--delay", "0", ...keys];
  const xdotoolEnv = { ...process.env, DISPLAY: display };

  const oursTimes: number[] = [];
  const xdotoolTimes: number[] = [];
  // Alternating single runs spread any drift of the machine over both sides.
  for (const phase of ["warm-up", "measure"] as const) {
    const runs = phase === "warm-up" ? settings.b2Warmup : settings.b2Repetitions;
    progress(`B2: ${phase}, ${runs} × (one 500-key press_key, one xdotool run)`);
    for (let i = 0; i < runs; i++) {
      recorder.clear();
      const ours = await runLoad(
        sequentialPost(
          `${gateway.url}/browsers/${tenant.sessionName}/computer/press_key`,
          JSON.stringify({ keys }),
          { amount: 1 },
          tenant.apiKey,
        ),
      );
      await recorder.waitForEvents(eventsFor(keys), 15_000);
      recorder.clear();
      const [xdotool] = await timeCommand("xdotool", xdotoolArgs, 1, xdotoolEnv);
      await recorder.waitForEvents(eventsFor(keys), 15_000);
      if (phase === "measure") {
        oursTimes.push(...(ours.latenciesMs ?? []));
        xdotoolTimes.push(xdotool as number);
      }
    }
  }
  recorder.clear();

  const oursMs = median(oursTimes);
  const xdotoolMs = median(xdotoolTimes);
  const oursRate = (KEY_COUNT * 1000) / oursMs;
  const xdotoolRate = (KEY_COUNT * 1000) / xdotoolMs;
  progress(`B2: ours ${oursMs.toFixed(1)} ms (${oursRate.toFixed(0)} keys/s), xdotool ${xdotoolMs.toFixed(1)} ms`);

  return {
    id: "B2",
    title: "one press_key request with 500 keys: keys per second",
    metrics: [
      metric({
        id: "B2",
        what: "500 keys in one request",
        unit: "keys/s",
        ours: Math.round(oursRate),
        baseline: { name: "`xdotool key --delay 0` ×500", value: Math.round(xdotoolRate) },
        target: { on: "ratio", op: ">=", value: 2.0 },
        samples: `${oursTimes.length} + ${xdotoolTimes.length} runs`,
      }),
    ],
    notes: [
      `Median of ${settings.b2Repetitions} runs each (after ${settings.b2Warmup} warm-up), alternating; ` +
        `ours ${round(oursMs, 1)} ms per request, xdotool ${round(xdotoolMs, 1)} ms per process.`,
      `The 500 keys (${eventsFor(keys)} X events with the Shift presses) all arrived in the recorder window, for both.`,
    ],
    details: { keys, oursMs: summarize(oursTimes), xdotoolMs: summarize(xdotoolTimes) },
    seconds: (performance.now() - started) / 1000,
  };
}
