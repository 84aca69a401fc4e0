import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { peakRssBytes } from "./lib/processes.ts";

const MB = 1024 * 1024;
const LIMITS: Record<string, number> = { gateway: 150, agent: 100 };

/**
 * B5: peak RSS of each gateway and of the agent over everything run so far (B1–B4 when run in order),
 * from the kernel's high-water mark, so no spike between samples is missed.
 */
export async function b5PeakRss(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const processes = ctx.env.measuredProcesses();
  if (processes.length === 0) await ctx.env.agent();
  const metrics = ctx.env.measuredProcesses().map((p) => {
    const kind = p.name === "agent" ? "agent" : "gateway";
    const peakMb = peakRssBytes(p.pid) / MB;
    ctx.progress(`B5: ${p.name} peak RSS ${peakMb.toFixed(1)} MB`);
    return metric({
      id: "B5",
      what: `peak RSS, ${p.name}`,
      unit: "MB",
      ours: Math.round(peakMb * 10) / 10,
      target: { on: "value", op: "<=", value: LIMITS[kind] as number },
      samples: "VmHWM",
    });
  });
  const floor = ctx.env.floorAgent();
  if (floor) {
    const peakMb = peakRssBytes(floor.pid) / MB;
    ctx.progress(`B5: ${floor.name} peak RSS ${peakMb.toFixed(1)} MB`);
    metrics.push(
      metric({
        id: "B5",
        what: "floor: peak RSS, bare grpc-js agent (lstat, XTEST), same Node settings",
        unit: "MB",
        ours: Math.round(peakMb * 10) / 10,
        samples: "VmHWM",
      }),
    );
  }
  return {
    id: "B5",
    title: "peak RSS of gateway and agent during B1–B4",
    metrics,
    notes: [
      "VmHWM from /proc/<pid>/status after B1–B4: the gateway on SQLite served B1–B4, the gateway on PostgreSQL B4, the " +
        "agent B1–B3. Each runs with LOG_LEVEL=info writing to a file, as in production, with production's Node " +
        "settings (deploy/node-runtime.ts) and a filled compile cache. The floor agent served the floor rounds of B1 " +
        "and B3 with the same settings: a bare grpc-js server around the agent's lstat and XTEST code.",
    ],
    details: Object.fromEntries(metrics.map((m) => [m.what, m.ours])),
    seconds: (performance.now() - started) / 1000,
  };
}
