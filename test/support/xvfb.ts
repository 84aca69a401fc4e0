import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { readDisplayNumber } from "../../packages/host-agent/src/display/xvfb.ts";

export interface Xvfb {
  /** The DISPLAY value, such as ":1". */
  display: string;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 10_000;

/**
 * Starts a real Xvfb, by default on a free display that Xvfb picks itself (-displayfd), or on the given one
 * (to restart a server in place). Fails, never skips, when Xvfb is missing: Debian/Ubuntu `apt-get install xvfb`.
 */
export async function startXvfb(options: { display?: string } = {}): Promise<Xvfb> {
  // Without -noreset the server resets whenever its last client leaves, which races tests that reconnect.
  const args = ["-displayfd", "3", "-nolisten", "tcp", "-noreset", "-screen", "0", "1024x768x24"];
  if (options.display) args.unshift(options.display);
  const child = spawn("Xvfb", args, { stdio: ["ignore", "ignore", "pipe", "pipe"] });
  const stderr: string[] = [];
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    process.removeListener("exit", killOnExit);
    // No pid: spawning failed and there is no process to wait for.
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    await exited;
  };

  try {
    const displayNumber = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("Xvfb did not start within 10 s")), STARTUP_TIMEOUT_MS);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      child.once("error", (error: NodeJS.ErrnoException) =>
        fail(
          error.code === "ENOENT"
            ? new Error("Xvfb is not installed; the keyboard tests need it (Debian/Ubuntu: apt-get install xvfb)")
            : error,
        ),
      );
      child.once("exit", (code, signal) =>
        fail(new Error(`Xvfb exited before it was ready (code ${code}, signal ${signal}): ${stderr.join("").trim()}`)),
      );
      readDisplayNumber(child.stdio[3] as Readable).then((displayNumber) => {
        clearTimeout(timer);
        resolve(displayNumber);
      }, fail);
    });
    return { display: `:${displayNumber}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
