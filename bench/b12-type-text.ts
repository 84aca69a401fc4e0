import { type BenchContext, type BenchOutcome, SkipBenchmark } from "./lib/bench.ts";

// SCAFFOLD (replaced by the type_text benchmark).
export async function b12TypeText(_ctx: BenchContext): Promise<BenchOutcome> {
  throw new SkipBenchmark("B12 is not built yet");
}
