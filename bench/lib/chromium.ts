import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { chromiumFlags, type WindowSize } from "../../packages/host-agent/src/browser/launch.ts";
import { BROWSER_MARKER_VARIABLE, killAll, MARKER_VARIABLE } from "../../packages/host-agent/src/browser/processes.ts";
import { type BrowserDir, makeBrowserDir, removeBrowserDir } from "../../packages/host-agent/src/browser/profile.ts";
import { X11Connection } from "../../packages/host-agent/src/keyboard/x11-client.ts";
import { CdpClient } from "./cdp-client.ts";

/** A Chromium the bench launched itself, the way a launch-per-session service does. */
export interface ColdChromium {
  pid: number;
  cdpWsUrl: string;
  dir: BrowserDir;
  /** Kills its process group and whatever else carries its directory's marker, then deletes its directory. */
  stop(): Promise<void>;
}

const LAUNCH_TIMEOUT_MS = 30_000;

/**
 * Spawns Chromium with the agent's own flags (chromiumFlags) and environment (HOME and TMPDIR in a
 * new, empty browser directory made by the agent's makeBrowserDir) in a process group of its own,
 * and resolves once it printed "DevTools listening on ws://…".
 */
export async function launchColdChromium(options: {
  chromiumPath: string;
  display: string;
  /** The display's X authority file, when it admits only clients with its cookie. */
  xauthority?: string;
  /** The directory the browser directory is made in (as the agent's data directory). */
  baseDir: string;
  name: string;
  windowSize: WindowSize;
  sandbox: boolean;
  /** A proxy for all its traffic, with the agent's proxy flags; none by default. */
  proxyServer?: string;
}): Promise<ColdChromium> {
  const dir = await makeBrowserDir(options.baseDir, options.name);
  const marker = `${BROWSER_MARKER_VARIABLE}=${dir.root}`;
  const child = spawn(options.chromiumPath, chromiumFlags({ ...options, proxyServer: options.proxyServer, dir }), {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir.home,
      TMPDIR: dir.tmp,
      XDG_CONFIG_HOME: `${dir.home}/.config`,
      XDG_CACHE_HOME: `${dir.home}/.cache`,
      DISPLAY: options.display,
      ...(options.xauthority && { XAUTHORITY: options.xauthority }),
      [MARKER_VARIABLE]: options.baseDir,
      [BROWSER_MARKER_VARIABLE]: dir.root,
    },
    cwd: dir.home,
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  const stop = async () => {
    if (pid !== undefined) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await killAll({ marker, groups: pid === undefined ? [] : [pid] });
    await exited;
    await removeBrowserDir(dir);
  };
  const lines: string[] = [];
  try {
    const cdpWsUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Chromium did not listen in time: ${lines.join(" | ")}`)),
        LAUNCH_TIMEOUT_MS,
      );
      let partial = "";
      // Read for the browser's whole life: a full pipe would block Chromium.
      child.stderr?.on("data", (chunk: Buffer) => {
        const split = (partial + chunk.toString("utf8")).split("\n");
        partial = split.pop() ?? "";
        for (const line of split) {
          if (lines.length < 30) lines.push(line);
          const match = /^DevTools listening on (ws:\/\/\S+)/.exec(line);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`Chromium exited before it listened: ${lines.join(" | ")}`));
      });
    });
    return { pid: pid as number, cdpWsUrl, dir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Opens a WebSocket to a DevTools URL, sends Browser.getVersion, and resolves with the product once
 * it is answered; the socket is closed again.
 */
export async function firstCdpAnswer(cdpWsUrl: string, timeoutMs = 30_000): Promise<string> {
  const socket = new WebSocket(cdpWsUrl);
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no CDP answer from ${cdpWsUrl} in ${timeoutMs} ms`)), timeoutMs);
      socket.addEventListener("open", () => socket.send(JSON.stringify({ id: 1, method: "Browser.getVersion" })));
      socket.addEventListener("message", (event) => {
        const reply = JSON.parse(String(event.data)) as { id?: number; result?: { product?: string }; error?: unknown };
        if (reply.id !== 1) return;
        clearTimeout(timer);
        if (reply.result?.product) resolve(reply.result.product);
        else reject(new Error(`Browser.getVersion failed: ${JSON.stringify(reply.error)}`));
      });
      socket.addEventListener("error", () => {
        clearTimeout(timer);
        reject(new Error(`WebSocket to ${cdpWsUrl} failed`));
      });
      socket.addEventListener("close", () => {
        clearTimeout(timer);
        reject(new Error(`WebSocket to ${cdpWsUrl} closed before the answer`));
      });
    });
  } finally {
    socket.close();
  }
}

/** Whether /proc/<pid>/environ holds NAME=value (false when the process is gone). */
export function hasEnvironment(pid: number, entry: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry);
  } catch {
    return false;
  }
}

/**
 * Opens an X connection presenting the cookie in `xauthority` (node-x11 reads XAUTHORITY while it
 * connects, so the variable is set until the connection is up; the bench opens one at a time).
 */
async function openDisplay(display: string, xauthority: string | undefined): Promise<X11Connection> {
  if (xauthority === undefined) return X11Connection.open(display);
  const previous = process.env.XAUTHORITY;
  process.env.XAUTHORITY = xauthority;
  try {
    return await X11Connection.open(display);
  } finally {
    if (previous === undefined) delete process.env.XAUTHORITY;
    else process.env.XAUTHORITY = previous;
  }
}

/**
 * Waits until the X keyboard focus on `display` is on a live Chromium window of the agent with
 * data directory `dataDir`: the last step of the agent's spare launch (launchFreshBrowser resolves
 * when focusWindowOf sees the focus there). Resolves with that Chromium's pid.
 */
export async function waitForFocusedSpare(
  agent: { display: string; dataDir: string; xauthority: string | undefined },
  timeoutMs = 60_000,
): Promise<number> {
  const { display, dataDir } = agent;
  const connection = await openDisplay(display, agent.xauthority);
  try {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const focus = await connection.getInputFocus();
      if (focus > 1) {
        const pid = await connection.cardinalProperty(focus, "_NET_WM_PID").catch(() => undefined);
        if (pid !== undefined && hasEnvironment(pid, `${MARKER_VARIABLE}=${dataDir}`)) return pid;
      }
      if (performance.now() > deadline)
        throw new Error(`no spare browser took the focus on ${display} in ${timeoutMs} ms`);
      await sleep(25);
    }
  } finally {
    await connection.close();
  }
}

/**
 * The loopback DevTools URL (ws://127.0.0.1:<port>/devtools/browser/<id>) of an agent's browser, from
 * the DevToolsActivePort file Chromium writes in its profile (port, then path).
 */
export function devToolsUrlOf(pid: number): string | undefined {
  try {
    const entry = readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .find((e) => e.startsWith(`${BROWSER_MARKER_VARIABLE}=`));
    if (!entry) return undefined;
    const root = entry.slice(BROWSER_MARKER_VARIABLE.length + 1);
    const [portLine, path] = readFileSync(`${root}/profile/DevToolsActivePort`, "utf8").split("\n");
    const port = Number(portLine);
    if (!Number.isInteger(port) || port <= 0 || !path?.startsWith("/devtools/browser/")) return undefined;
    return `ws://127.0.0.1:${port}${path}`;
  } catch {
    return undefined;
  }
}

/**
 * The processes of the browser behind a DevTools URL as that browser reports them, over a connection
 * of its own: SystemInfo.getProcessInfo lists its browser process (type "browser", id its pid) and
 * its children.
 */
export async function browserProcessesVia(cdpWsUrl: string): Promise<{ type: string; id: number }[]> {
  const client = await CdpClient.open(cdpWsUrl);
  try {
    const { processInfo } = await client.send<{ processInfo: { type: string; id: number }[] }>(
      "SystemInfo.getProcessInfo",
    );
    return processInfo;
  } finally {
    await client.close();
  }
}
