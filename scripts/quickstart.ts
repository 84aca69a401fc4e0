/**
 * `npm start`: the whole service on one machine, on its embedded defaults.
 * Starts Xvfb when DISPLAY is unset and Xvfb is installed, a host agent, and
 * the gateway on SQLite with the agent as its host; makes an API key and,
 * through the API, a browser session named `local`; prints what to paste to
 * use it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { MAIN, runtimeEnv, type Service, warmCompileCache } from "../deploy/node-runtime.ts";
import { createApiKey } from "../packages/gateway/src/auth/api-keys.ts";
import { openStore, sqlitePathIn } from "../packages/gateway/src/store/store.ts";

const ORGANIZATION = "default";
const SESSION_NAME = "local";
// The longest idle timeout the API allows (72 h), so the session outlives a quiet afternoon.
const SESSION_TIMEOUT_SECONDS = 259_200;
const dataDir = resolve(process.env.DATA_DIR || "./data");
const port = process.env.PORT || "8080";
const logDir = join(dataDir, "logs");
const compileCacheDir = join(dataDir, "compile-cache");
mkdirSync(logDir, { recursive: true });

const children: ChildProcess[] = [];

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function hasCommand(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Starts a child whose JSON log goes to a file; resolves with the first line matching `ready`. */
function start(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: (line: string) => string | undefined,
): Promise<{ child: ChildProcess; value: string }> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe", "pipe"] });
  children.push(child);
  const log = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const onLine = (line: string) => {
      log.write(`${line}\n`);
      if (settled) return;
      const value = ready(line);
      if (value !== undefined) {
        settled = true;
        resolvePromise({ child, value });
      }
    };
    for (const stream of [child.stdout, child.stderr, child.stdio[3]]) {
      if (stream) createInterface({ input: stream as NodeJS.ReadableStream }).on("line", onLine);
    }
    child.on("exit", (code) => {
      if (!settled) reject(new Error(`${name} exited with code ${code}; see ${join(logDir, `${name}.log`)}`));
    });
  });
}

function jsonField(line: string, msg: string, field: string): string | undefined {
  try {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    return parsed.msg === msg ? String(parsed[field]) : undefined;
  } catch {
    return undefined;
  }
}

async function startXvfb(): Promise<string | undefined> {
  if (process.env.DISPLAY) return process.env.DISPLAY;
  if (!hasCommand("Xvfb")) {
    say("note: no DISPLAY and no Xvfb: press_key will answer 503 display_unavailable (apt-get install xvfb)");
    return undefined;
  }
  // -displayfd 3: Xvfb picks a free display and writes its number on fd 3.
  const { value } = await start(
    "xvfb",
    "Xvfb",
    ["-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
    {},
    (line) => (/^\d+$/.test(line.trim()) ? line.trim() : undefined),
  );
  return `:${value}`;
}

/** Replaces the previous run's `local` session (its host is gone) with one on this run's agent. */
async function createLocalSession(baseUrl: string, key: string): Promise<void> {
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
  if (!created.ok) throw new Error(`could not create the ${SESSION_NAME} session: ${await created.text()}`);
}

async function stopAll(): Promise<void> {
  for (const child of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await once(child, "exit");
    clearTimeout(timer);
  }
}

let stopping = false;
async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    say("\nstopping…");
    await stopAll();
  }
  process.exit(code);
}
/** The production runtime (deploy/node-runtime.ts), with the compile cache filled before the start. */
function production(service: Service): NodeJS.ProcessEnv {
  warmCompileCache(service, compileCacheDir);
  return runtimeEnv(service, compileCacheDir);
}

process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

try {
  const display = await startXvfb();
  const agent = await start(
    "host-agent",
    process.execPath,
    [MAIN["host-agent"]],
    {
      ...production("host-agent"),
      AGENT_LISTEN: process.env.AGENT_LISTEN || "127.0.0.1:0",
      DISPLAY: display ?? "",
    },
    (line) => jsonField(line, "listening", "port"),
  );
  const agentAddress = `127.0.0.1:${agent.value}`;

  const store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
  const { key } = await createApiKey(store, ORGANIZATION, "quick start");
  await store.close();

  const gateway = await start(
    "gateway",
    process.execPath,
    [MAIN.gateway],
    { ...production("gateway"), PORT: port, DATA_DIR: dataDir, HOST_AGENTS: agentAddress, DATABASE_URL: "" },
    (line) => jsonField(line, "listening", "port"),
  );
  const baseUrl = `http://127.0.0.1:${gateway.value}`;
  await createLocalSession(baseUrl, key);

  for (const child of children) {
    child.on("exit", (code) => {
      if (stopping) return;
      say(`a process exited unexpectedly (code ${code}); logs in ${logDir}`);
      void shutdown(1);
    });
  }

  say(
    `gateway on ${baseUrl} (SQLite in ${dataDir}), host agent on ${agentAddress}${display ? `, display ${display}` : ""}`,
  );
  say(`logs: ${logDir}\n`);
  say("Paste these to use the official client or curl:\n");
  say(`export KERNEL_BASE_URL=${baseUrl}`);
  say(`export KERNEL_API_KEY=${key}\n`);
  say("Try it:\n");
  say(
    `curl -s -H "Authorization: Bearer $KERNEL_API_KEY" "$KERNEL_BASE_URL/browsers/${SESSION_NAME}/fs/file_info?path=/"\n`,
  );
  say("Ctrl-C stops everything.");
} catch (error) {
  say(`could not start: ${(error as Error).message}`);
  await shutdown(1);
}
