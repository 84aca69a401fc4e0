import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../logger.ts";
import { BROWSER_MARKER_VARIABLE, killAll, MARKER_VARIABLE } from "./processes.ts";
import type { BrowserDir } from "./profile.ts";

export interface WindowSize {
  width: number;
  height: number;
}

export interface LaunchOptions {
  chromiumPath: string;
  /** X display to open the window on; undefined: headless. */
  display: string | undefined;
  dir: BrowserDir;
  windowSize: WindowSize;
  /** Chromium's own sandbox; off where the kernel does not allow it (see browser/sandbox.ts). */
  sandbox: boolean;
  /**
   * The proxy all the browser's traffic goes through: the agent's relay on loopback
   * (proxy-relay/relay.ts). Undefined only for the benchmarks' baselines.
   */
  proxyServer: string | undefined;
  /** The agent's data directory, put in every process's environment (see browser/processes.ts). */
  dataDir: string;
  logger: Logger;
  /** How long Chromium may take to listen for DevTools. */
  timeoutMs?: number;
}

/** A running Chromium that this agent launched. Ended only through kill(). */
export interface Browser {
  readonly pid: number;
  /** Chromium's DevTools WebSocket URL on the host's loopback. */
  readonly cdpWsUrl: string;
  readonly headless: boolean;
  readonly windowSize: WindowSize;
  readonly dir: BrowserDir;
  /** Resolves, with a description such as "exited with code 1" or "was killed by SIGKILL", when the browser exits. */
  readonly exited: Promise<string>;
  /** False once the browser process has exited. */
  readonly alive: boolean;
  /** SIGTERM to its process group, SIGKILL after graceMs; resolves once no process of it is left. */
  kill(graceMs: number): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const KEPT_STDERR_LINES = 30;

/**
 * Flags for a browser that an agent drives, that starts with one blank tab, and that reaches
 * nothing on the network by itself. The window covers the screen from its top-left corner: there
 * is no window manager to place it. Every request goes through the agent's relay, loopback ones
 * too (Chromium would otherwise reach localhost directly), and nothing goes around it: QUIC is
 * off and WebRTC may not send UDP outside the proxy.
 */
export function chromiumFlags(
  options: Pick<LaunchOptions, "display" | "dir" | "windowSize" | "sandbox" | "proxyServer">,
): string[] {
  return [
    ...(options.sandbox ? [] : ["--no-sandbox"]),
    ...(options.display === undefined ? ["--headless"] : []),
    `--user-data-dir=${options.dir.profile}`,
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--disable-gpu",
    // Shared memory files go to TMPDIR, the browser's own directory, so they end with it.
    "--disable-dev-shm-usage",
    "--disable-quic",
    ...(options.proxyServer === undefined
      ? []
      : [
          `--proxy-server=${options.proxyServer}`,
          "--proxy-bypass-list=<-loopback>",
          "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        ]),
    "--password-store=basic",
    "--use-mock-keychain",
    "--window-position=0,0",
    `--window-size=${options.windowSize.width},${options.windowSize.height}`,
    "about:blank",
  ];
}

/**
 * Launches Chromium in a process group of its own, with HOME and TMPDIR in its directory, and
 * resolves once it listens for DevTools. Rejects (having killed what it started) when Chromium
 * exits first or does not listen in time, with the last lines it printed.
 */
export async function launchChromium(options: LaunchOptions): Promise<Browser> {
  const { dir, logger } = options;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir.home,
    TMPDIR: dir.tmp,
    XDG_CONFIG_HOME: `${dir.home}/.config`,
    XDG_CACHE_HOME: `${dir.home}/.cache`,
    [MARKER_VARIABLE]: options.dataDir,
    [BROWSER_MARKER_VARIABLE]: dir.root,
    ...(options.display !== undefined && { DISPLAY: options.display }),
    // The display's cookie, when it wants one (always for the agent's own Xvfb).
    ...(process.env.XAUTHORITY && { XAUTHORITY: process.env.XAUTHORITY }),
  };
  const child = spawn(options.chromiumPath, chromiumFlags(options), {
    env,
    cwd: dir.home,
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  const pid = child.pid;
  const stderr: string[] = [];
  let alive = true;
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    child.once("error", (error) => resolve(`could not be started: ${error.message}`));
  });
  const marker = `${BROWSER_MARKER_VARIABLE}=${dir.root}`;
  const kill = async (graceMs: number) => {
    if (pid !== undefined) {
      try {
        process.kill(-pid, "SIGTERM");
      } catch {
        // The group is gone already.
      }
      await Promise.race([exited, sleep(graceMs)]);
    }
    // Whatever is left of it, the browser or a child that left its group, is killed and waited for.
    await killAll({ marker, groups: pid === undefined ? [] : [pid] });
    await exited;
  };

  let partial = "";
  // Read for the browser's whole life: a full pipe would block Chromium on its next write.
  child.stderr?.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      stderr.push(line);
      if (stderr.length > KEPT_STDERR_LINES) stderr.shift();
      logger.debug({ pid, line }, "chromium");
    }
  });

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    const cdpWsUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Chromium did not listen for DevTools within ${timeoutMs} ms: ${stderr.join(" | ")}`)),
        timeoutMs,
      );
      const onData = () => {
        for (const line of stderr) {
          const match = /^DevTools listening on (ws:\/\/\S+)/.exec(line);
          if (match?.[1]) {
            clearTimeout(timer);
            child.stderr?.off("data", onData);
            resolve(match[1]);
          }
        }
      };
      child.stderr?.on("data", onData);
      void exited.then((how) => {
        clearTimeout(timer);
        reject(new Error(`Chromium ${how} before it listened for DevTools: ${stderr.join(" | ")}`));
      });
    });
    void exited.then(() => {
      alive = false;
    });
    return {
      pid: pid as number,
      cdpWsUrl,
      headless: options.display === undefined,
      windowSize: options.windowSize,
      dir,
      exited,
      get alive() {
        return alive;
      },
      kill,
    };
  } catch (error) {
    await kill(0);
    throw error;
  }
}
