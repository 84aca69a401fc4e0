import { type BenchContext, type BenchOutcome, SkipBenchmark } from "./lib/bench.ts";

// SCAFFOLD (replaced by the screenshot benchmark).
export async function b11Screenshot(_ctx: BenchContext): Promise<BenchOutcome> {
  throw new SkipBenchmark("B11 is not built yet");
}
