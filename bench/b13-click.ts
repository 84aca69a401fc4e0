import { type BenchContext, type BenchOutcome, SkipBenchmark } from "./lib/bench.ts";

// SCAFFOLD (replaced by the click benchmark).
export async function b13Click(_ctx: BenchContext): Promise<BenchOutcome> {
  throw new SkipBenchmark("B13 is not built yet");
}
