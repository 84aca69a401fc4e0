import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { MARKER_VARIABLE } from "../browser/processes.ts";

export interface OwnXvfb {
  /** The DISPLAY value, such as ":3". */
  display: string;
  /** Resolves when Xvfb exits, with how. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 10_000;

/**
 * Starts an Xvfb of the agent's own on a free display (Xvfb picks it: -displayfd), with the data
 * directory's marker so that a later agent kills it if this one dies without stopping it.
 */
export async function startOwnXvfb(screen: string, dataDir: string): Promise<OwnXvfb> {
  // -noreset: the server would otherwise reset whenever its last client leaves, between two sessions.
  const child: ChildProcess = spawn(
    "Xvfb",
    ["-displayfd", "3", "-screen", "0", screen, "-nolisten", "tcp", "-noreset"],
    {
      stdio: ["ignore", "ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH, [MARKER_VARIABLE]: dataDir },
    },
  );
  const stderr: string[] = [];
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr.push(chunk.toString("utf8"));
    if (stderr.length > 20) stderr.shift();
  });
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    child.once("error", (error) => resolve(`could not be started: ${error.message}`));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) child.kill("SIGTERM");
    await exited;
  };
  try {
    const number = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Xvfb did not start within ${STARTUP_TIMEOUT_MS} ms`)),
        STARTUP_TIMEOUT_MS,
      );
      void exited.then((how) => {
        clearTimeout(timer);
        const hint = how.startsWith("could not")
          ? " (Debian/Ubuntu: apt-get install xvfb, or run scripts/setup.sh)"
          : "";
        reject(new Error(`Xvfb ${how}${hint}: ${stderr.join("").trim()}`));
      });
      readDisplayNumber(child.stdio[3] as Readable).then((value) => {
        clearTimeout(timer);
        resolve(value);
      }, reject);
    });
    return { display: `:${number}`, exited, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Xvfb writes its display number and a newline to the -displayfd pipe once it accepts connections. */
export async function readDisplayNumber(pipe: Readable): Promise<number> {
  let text = "";
  for await (const chunk of pipe) {
    text += (chunk as Buffer).toString("utf8");
    if (text.includes("\n")) return Number.parseInt(text, 10);
  }
  throw new Error("Xvfb closed the -displayfd pipe without naming its display");
}
