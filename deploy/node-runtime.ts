/**
 * How Node runs the gateway and the host agent in production. `npm start` and `npm run bench` read
 * these values from here; the Dockerfiles and systemd units carry copies, which
 * test/e2e/node-runtime.test.ts keeps equal to them.
 *
 * Why (benchmark B5, bench/analysis.md):
 * - V8 sizes its young generation and lets old space grow for the machine's memory, so under load
 *   the agent reached 300 MB and the gateway 350 MB on a 24 GB machine while their live heaps stayed
 *   near 20 MB. A 2 MB semi-space (1 MB peaked no lower and served less) and an old-space limit a
 *   few times the live heap keep them near what they use (V8 also grows the heap more cautiously
 *   when its limit is small); lower limits measured no smaller. The limit is a hard one, so it
 *   leaves room: the gateway's for dozens of concurrent 1 MiB request bodies, the agent's for calls
 *   of gRPC's 4 MB message limit.
 * - Node strips types with a WebAssembly build of swc that, once loaded, keeps about 24 MB for the
 *   life of the process. With NODE_COMPILE_CACHE, Node keeps the stripped code on disk and a
 *   process whose modules are all in the cache never loads the stripper. `main.ts --version`
 *   loads every module and exits, so it fills the cache (warmCompileCache).
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");

export type Service = "gateway" | "host-agent";

export const MAIN: Record<Service, string> = {
  gateway: resolve(root, "packages/gateway/src/main.ts"),
  "host-agent": resolve(root, "packages/host-agent/src/main.ts"),
};

export const NODE_OPTIONS: Record<Service, string> = {
  gateway: "--max-semi-space-size=2 --max-old-space-size=256",
  "host-agent": "--max-semi-space-size=2 --max-old-space-size=128",
};

/** The environment a service runs with, its compile cache in `compileCacheDir`. */
export function runtimeEnv(service: Service, compileCacheDir: string): NodeJS.ProcessEnv {
  return { NODE_OPTIONS: NODE_OPTIONS[service], NODE_COMPILE_CACHE: compileCacheDir };
}

/**
 * Fills the compile cache for the service, so its next start never loads the type stripper. `main`
 * is another entry point to run the same way (it must exit on --version once loaded).
 */
export function warmCompileCache(service: Service, compileCacheDir: string, main = MAIN[service]): void {
  execFileSync(process.execPath, [main, "--version"], {
    env: { PATH: process.env.PATH, ...runtimeEnv(service, compileCacheDir) },
    stdio: "ignore",
  });
}
