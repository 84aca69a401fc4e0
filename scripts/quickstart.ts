/**
 * `npm start`: the whole service on one machine, on its embedded defaults, with real browsers.
 * Starts QUICKSTART_BROWSERS host agents (default 2), each of which starts its own Xvfb and its own
 * Chromium, and the gateway on SQLite with every agent as a host; makes an API key and, through
 * the API, a browser session named `local` on one of the agents (the others stay free for
 * `browsers.create()`); prints what to paste to use it and the session's DevTools URL.
 *
 * package.json's "prestart" has run scripts/setup.sh first, which installs Xvfb, Chromium and the
 * rest when they are missing.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { MAIN, runtimeEnv, type Service, warmCompileCache } from "../deploy/node-runtime.ts";
import { createApiKey } from "../packages/gateway/src/auth/api-keys.ts";
import { prepareDataDir, privateDirectory, privateFile } from "../packages/gateway/src/data-dir.ts";
import { openStore, sqlitePathIn } from "../packages/gateway/src/store/store.ts";

const ORGANIZATION = "default";
const SESSION_NAME = "local";
// The longest idle timeout the API allows (72 h), so the session outlives a quiet afternoon.
const SESSION_TIMEOUT_SECONDS = 259_200;
const SCREEN = "1280x800x24";
const MAX_BROWSERS = 16;
// An agent is ready once its Xvfb runs and its warm Chromium listens: seconds, more on a cold disk.
const AGENT_START_TIMEOUT_MS = 90_000;
const GATEWAY_START_TIMEOUT_MS = 30_000;
// The agents end their Chromium and Xvfb on SIGTERM; the gateway only closes connections.
const AGENT_STOP_GRACE_MS = 15_000;
const GATEWAY_STOP_GRACE_MS = 10_000;
const SETUP_COMMAND = "bash scripts/setup.sh run";

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function browserCount(raw: string | undefined): number {
  if (!raw) return 2;
  const count = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (count >= 1 && count <= MAX_BROWSERS) return count;
  say(`QUICKSTART_BROWSERS must be a whole number from 1 to ${MAX_BROWSERS}, got "${raw}"`);
  process.exit(2);
}

const browsers = browserCount(process.env.QUICKSTART_BROWSERS);
const dataDir = resolve(process.env.DATA_DIR || "./data");
const port = process.env.PORT || "8080";
const logDir = join(dataDir, "logs");
const compileCacheDir = join(dataDir, "compile-cache");
// DATA_DIR holds the store, the secrets key and the logs: only this user may read them, whatever
// the umask; what an earlier run left open to others is tightened.
for (const { path, from, to } of [
  ...prepareDataDir(dataDir),
  ...privateDirectory(logDir),
  ...readdirSync(logDir).flatMap((name) => privateFile(join(logDir, name))),
]) {
  say(`other users could read ${shown(path)} (mode ${from}); made it ${to}`);
}

/** A path as short as the user can paste it: relative to where `npm start` ran when inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") ? rel : path;
}

interface Started<T> {
  child: ChildProcess;
  value: T;
}

/** Why a start failed, with the process's last log lines to tell the reason from. */
class StartError extends Error {
  readonly lastLines: string[];
  constructor(message: string, lastLines: string[]) {
    super(message);
    this.lastLines = lastLines;
  }
}

const children: ChildProcess[] = [];
/** The children that said they are ready, which have set up their handling of SIGTERM by then. */
const readyChildren = new Set<ChildProcess>();
const KEPT_LINES = 50;

/**
 * Starts a child whose log (JSON lines, and any plain text it prints) goes to
 * `$DATA_DIR/logs/<name>.log`; resolves with what `ready` finds in the first line it accepts.
 * The child runs in a process group of its own, so the terminal's Ctrl-C reaches only this
 * script, which then stops the children in order (the gateway before the agents it calls).
 */
function start<T>(
  name: string,
  service: Service,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  ready: (line: Record<string, unknown>) => T | undefined,
): Promise<Started<T>> {
  const child = spawn(process.execPath, [MAIN[service]], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  children.push(child);
  const logPath = join(logDir, `${name}.log`);
  const log = createWriteStream(logPath, { flags: "a", mode: 0o600 });
  const lastLines: string[] = [];
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new StartError(`${name} ${why}; its log: ${shown(logPath)}`, lastLines));
    };
    const timer = setTimeout(() => fail(`was not ready within ${timeoutMs / 1000} s`), timeoutMs);
    const onLine = (line: string) => {
      log.write(`${line}\n`);
      if (settled) return;
      lastLines.push(line);
      if (lastLines.length > KEPT_LINES) lastLines.shift();
      const parsed = parseJson(line);
      const value = parsed && ready(parsed);
      if (value !== undefined) {
        settled = true;
        readyChildren.add(child);
        clearTimeout(timer);
        resolvePromise({ child, value });
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", onLine);
    }
    child.on("error", (error) => fail(`could not be started: ${error.message}`));
    child.on("exit", (code, signal) => {
      const how = signal ? `on ${signal}` : `with code ${code}`;
      if (!settled) return fail(`exited ${how}`);
      // Once it was ready, only stopping everything ends it.
      if (stopping) return;
      say(`${name} exited unexpectedly (${how}); its log: ${shown(logPath)}`);
      void shutdown(1);
    });
  });
}

function parseJson(line: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The reason a process gave for failing, from its last lines: its last error or fatal log line
 * (pino levels 50 and 60, with the error's message), else the plain text it printed last (a
 * configuration error, a stack trace).
 */
function failureReason(lines: string[]): string | undefined {
  for (const line of [...lines].reverse()) {
    const parsed = parseJson(line);
    if (!parsed || typeof parsed.level !== "number" || parsed.level < 50) continue;
    const err = parsed.err as { message?: unknown } | undefined;
    const detail = typeof err?.message === "string" && err.message !== parsed.msg ? `: ${err.message}` : "";
    return `${String(parsed.msg)}${detail}`;
  }
  const text = lines.filter((line) => line.trim() !== "" && !parseJson(line));
  return text.length > 0 ? text.slice(-5).join("\n  ") : undefined;
}

/** The production runtime (deploy/node-runtime.ts), with the compile cache filled before the start. */
function production(service: Service): NodeJS.ProcessEnv {
  warmCompileCache(service, compileCacheDir);
  return runtimeEnv(service, compileCacheDir);
}

interface Agent {
  number: number;
  address: string;
  display: string | undefined;
}

/** Starts every agent at once: each brings up its Xvfb and a warm Chromium, which takes seconds. */
async function startAgents(): Promise<Agent[]> {
  const env = production("host-agent");
  // The agents listen on Unix sockets in a directory only this user can enter: a TCP port on
  // loopback would let any local user drive the browsers and read files as this user.
  const socketDir = join(dataDir, "sockets");
  privateDirectory(socketDir);
  const starts = Array.from({ length: browsers }, async (_, index): Promise<Agent> => {
    const number = index + 1;
    const address = `unix:${join(socketDir, `host-agent-${number}.sock`)}`;
    const { value } = await start(
      `host-agent-${number}`,
      "host-agent",
      {
        ...env,
        // The agent starts Xvfb on a free display itself, and ends it when it stops.
        AGENT_XVFB: SCREEN,
        DISPLAY: "",
        // Each agent owns its directory (profiles, downloads) and empties it when it starts.
        AGENT_DATA_DIR: join(dataDir, `host-agent-${number}`),
        AGENT_LISTEN: address,
        // A free port, so that several agents (and anything else on the machine) never clash.
        AGENT_METRICS_LISTEN: "127.0.0.1:0",
      },
      AGENT_START_TIMEOUT_MS,
      (line) =>
        line.msg === "listening" ? { display: typeof line.display === "string" ? line.display : undefined } : undefined,
    );
    const agent = { number, address, display: value.display || undefined };
    say(`  host agent ${number} ready on ${agent.address}${agent.display ? `, display ${agent.display}` : ""}`);
    return agent;
  });
  const results = await Promise.allSettled(starts);
  if (stopping) throw new Error("stopped while the agents started");
  const failures = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
  if (failures.length === 0) return results.map((result) => (result as PromiseFulfilledResult<Agent>).value);
  // Agents that fail alike (Chromium missing) are told once, the reason after the list of them.
  const byReason = new Map<string, string[]>();
  for (const failure of failures) {
    if (!(failure instanceof StartError)) throw failure;
    const reason = failureReason(failure.lastLines) ?? "(its log says nothing more)";
    byReason.set(reason, [...(byReason.get(reason) ?? []), failure.message]);
  }
  for (const [reason, messages] of byReason) {
    for (const message of messages) say(message);
    say(`  reason: ${reason}`);
  }
  say(`Missing system packages (Xvfb, Chromium, fonts) are installed by: ${SETUP_COMMAND}`);
  throw new Error(`${failures.length} of ${browsers} host agents did not start`);
}

interface SessionRecord {
  session_id: string;
  cdp_ws_url?: string;
}

/** Replaces the previous run's `local` session (its agent is gone) with one on an agent of this run. */
async function createLocalSession(baseUrl: string, key: string): Promise<SessionRecord> {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const previous = await fetch(`${baseUrl}/browsers/${SESSION_NAME}`, { method: "DELETE", headers });
  if (previous.status !== 204 && previous.status !== 404) {
    throw new Error(`could not end the previous ${SESSION_NAME} session: ${await previous.text()}`);
  }
  const created = await fetch(`${baseUrl}/browsers`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: SESSION_NAME, timeout_seconds: SESSION_TIMEOUT_SECONDS }),
  });
  if (!created.ok) {
    throw new Error(
      `could not create the ${SESSION_NAME} session (${created.status}): ${await created.text()}\n` +
        `  the logs of the gateway and the agents: ${shown(logDir)}`,
    );
  }
  return (await created.json()) as SessionRecord;
}

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Sends the signal to the child's process group: the child and what it started without a group of its own. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/**
 * SIGTERM to the child, SIGKILL to its process group after `graceMs`; resolves once it has exited.
 * A child that is not ready yet may not handle SIGTERM so far (an agent still starting its Xvfb),
 * so the SIGTERM goes to its whole group, which ends that Xvfb too.
 */
async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (!running(child)) return;
  const exited = once(child, "exit");
  if (readyChildren.has(child)) child.kill("SIGTERM");
  else signalGroup(child, "SIGTERM");
  const timer = setTimeout(() => signalGroup(child, "SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

let gatewayChild: ChildProcess | undefined;

/** The gateway first, so nothing calls an agent that is stopping; then every agent at once. */
async function stopAll(): Promise<void> {
  if (gatewayChild) await stopChild(gatewayChild, GATEWAY_STOP_GRACE_MS);
  await Promise.all(children.filter((child) => child !== gatewayChild).map((c) => stopChild(c, AGENT_STOP_GRACE_MS)));
}

let stopping = false;
let stopped: Promise<void> | undefined;
let exitCode: number | undefined;
/**
 * Stops everything once and exits with the first caller's code. Later calls (npm forwards the
 * terminal's SIGINT, which this script also gets itself) wait for the same stop.
 */
async function shutdown(code: number): Promise<never> {
  exitCode ??= code;
  if (!stopped) {
    stopping = true;
    if (children.some(running)) say("\nstopping (each agent ends its Chromium and Xvfb)…");
    stopped = stopAll();
  }
  await stopped;
  process.exit(exitCode);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void shutdown(0));
// The children run in process groups of their own, so nothing else would stop them if this script
// ended some other way (an exception): they still get their SIGTERM, and end their browsers.
process.on("exit", () => {
  for (const child of children) if (running(child)) child.kill("SIGTERM");
});

try {
  say(`starting ${plural(browsers, "host agent")}, each with its own Xvfb (${SCREEN}) and Chromium…`);
  const agents = await startAgents();

  const store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
  const { key } = await createApiKey(store, ORGANIZATION, "quick start");
  await store.close();

  say("starting the gateway…");
  const gateway = await start(
    "gateway",
    "gateway",
    {
      ...production("gateway"),
      PORT: port,
      DATA_DIR: dataDir,
      HOST_AGENTS: agents.map((agent) => agent.address).join(","),
      HOST_AGENTS_DNS: "",
      DATABASE_URL: "",
    },
    GATEWAY_START_TIMEOUT_MS,
    (line) => (line.msg === "listening" ? String(line.port) : undefined),
  );
  gatewayChild = gateway.child;
  const baseUrl = `http://127.0.0.1:${gateway.value}`;

  say(`creating the browser session "${SESSION_NAME}"…`);
  const session = await createLocalSession(baseUrl, key);

  const free = browsers - 1;
  say(`\ngateway on ${baseUrl} (SQLite in ${shown(dataDir)}), ${plural(browsers, "host agent")}:`);
  for (const agent of agents) {
    say(`  ${agent.number}: ${agent.address}${agent.display ? `, display ${agent.display}` : ""}`);
  }
  say(`logs: ${shown(logDir)}\n`);
  say("Paste these to use the official client or curl:\n");
  say(`export KERNEL_BASE_URL=${baseUrl}`);
  say(`export KERNEL_API_KEY=${key}\n`);
  say("Try it:\n");
  say(
    `curl -s -H "Authorization: Bearer $KERNEL_API_KEY" "$KERNEL_BASE_URL/browsers/${SESSION_NAME}/fs/file_info?path=/"\n`,
  );
  if (session.cdp_ws_url) {
    say(
      `The session "${SESSION_NAME}" (${session.session_id}) has its own Chromium; its DevTools URL, on the gateway (its token opens this session only; GET /browsers/${SESSION_NAME} hands out a fresh one):\n`,
    );
    say(`  ${session.cdp_ws_url}\n`);
    say(
      `Drive it with Playwright (playwright-core): const browser = await chromium.connectOverCDP("${session.cdp_ws_url}");\n`,
    );
  } else {
    say(
      `The session "${SESSION_NAME}" (${session.session_id}) reports no DevTools URL (its agent runs no Chromium).\n`,
    );
  }
  say(
    free > 0
      ? `${plural(free, "more browser")} free for browsers.create() (QUICKSTART_BROWSERS=${browsers}).`
      : `No browser free for another session: QUICKSTART_BROWSERS=${browsers + 1} npm start runs one more.`,
  );
  say("Ctrl-C stops everything.");
} catch (error) {
  // Ctrl-C while starting: what was in progress failed of it (the compile cache's warm-up runs in
  // the foreground and gets the terminal's SIGINT too), which is no failure to report.
  const signal = (error as { signal?: unknown }).signal;
  if (stopping || signal === "SIGINT" || signal === "SIGTERM" || signal === "SIGHUP") await shutdown(0);
  say(`could not start: ${(error as Error).message}`);
  await shutdown(1);
}
