import { spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's Chromium launcher (package `chromium`); it execs the browser, so its pid is the browser's. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;
const KEPT_STDERR_LINES = 200;

export interface Chromium {
  /** The browser's DevTools WebSocket URL, as Chromium printed it ("DevTools listening on ws://…"). */
  cdpWsUrl: string;
  /** The last lines Chromium wrote to stderr, for failure messages. */
  readonly stderr: readonly string[];
  /** SIGTERM, then SIGKILL to its whole process group after 10 s; removes its profile. */
  stop(): Promise<void>;
}

export interface ChromiumOptions {
  /** The X display to open its window on, such as ":1". Chromium runs headed: key events come from the X server. */
  display: string;
  /** The page the single window opens. */
  url: string;
}

/**
 * Starts Debian's Chromium, headed, on `display`, with one window covering a 1024x768 screen from its top-left
 * corner, remote debugging on a loopback port it picks itself, a fresh profile and nothing that reaches the
 * network on its own (the machines here have no outside network). Runs with umask 022, so the files it
 * downloads are `-rw-r--r--` whatever the test runner's umask. Fails, never skips, when Chromium is missing.
 */
export async function startChromium(options: ChromiumOptions): Promise<Chromium> {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}; the end-to-end test needs it (Debian/Ubuntu: apt-get install chromium)`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), "chromium-profile-"));
  const flags = [
    // Chromium refuses to run as root with its sandbox; CI runs as root.
    ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--password-store=basic",
    `--user-data-dir=${profile}`,
    "--remote-debugging-port=0",
    "--window-position=0,0",
    "--window-size=1024,768",
    options.url,
  ];
  // Its own process group, so stop() can end the renderers and the zygote too if the browser hangs.
  const child = spawn("/bin/sh", ["-c", 'umask 022 && exec "$0" "$@"', CHROMIUM_PATH, ...flags], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DISPLAY: options.display },
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  const stderr: string[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  process.once("exit", killGroup);

  const stop = async () => {
    process.removeListener("exit", killGroup);
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(killGroup, STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    rmSync(profile, { recursive: true, force: true });
  };

  try {
    const cdpWsUrl = await new Promise<string>((resolve, reject) => {
      const output = () => stderr.join("\n");
      const timer = setTimeout(
        () => reject(new Error(`Chromium printed no DevTools URL within ${STARTUP_TIMEOUT_MS} ms:\n${output()}`)),
        STARTUP_TIMEOUT_MS,
      );
      let partial = "";
      child.stderr?.on("data", (chunk: Buffer) => {
        const lines = (partial + chunk.toString("utf8")).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) {
          stderr.push(line);
          if (stderr.length > KEPT_STDERR_LINES) stderr.shift();
          const match = /^DevTools listening on (ws:\/\/\S+)/.exec(line);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        }
      });
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`Chromium exited before it listened (code ${code}, signal ${signal}):\n${output()}`));
      });
    });
    return { cdpWsUrl, stderr, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
