import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadResult, LoadSpec } from "./load-spec.ts";

const LOAD_CHILD = fileURLToPath(new URL("./load-child.ts", import.meta.url));

/**
 * Runs autocannon in a separate process and returns what it measured. Any failed request
 * (non-2xx, connection error, timeout) is an error: a throughput made of error answers means nothing.
 */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [LOAD_CHILD, JSON.stringify(spec)],
      { maxBuffer: 64 * 1024 * 1024 },
      (error, out, err) =>
        error ? reject(new Error(`load generator failed: ${error.message}\n${err}`)) : resolve(out),
    );
  });
  const result = JSON.parse(stdout.trim().split("\n").pop() ?? "") as LoadResult;
  if (result.failed > 0 || result.ok === 0) {
    throw new Error(
      `${spec.targets.map((t) => `${t.method} ${t.url}`).join(", ")}: ${result.failed} failed requests, ` +
        `${result.ok} ok; status codes ${JSON.stringify(result.statusCodes)}; errors ${JSON.stringify(result.errors)}`,
    );
  }
  return result;
}
