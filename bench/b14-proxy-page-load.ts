import { type BenchContext, type BenchOutcome, SkipBenchmark } from "./lib/bench.ts";

// SCAFFOLD (replaced by the page loads through the proxy relay benchmark).
export async function b14ProxyPageLoad(_ctx: BenchContext): Promise<BenchOutcome> {
  throw new SkipBenchmark("B14 is not built yet");
}
