import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { newId } from "../../packages/gateway/src/store/ids.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { createNamespacePair, type NamespacePair } from "../support/netns.ts";
import { AGENT_MAIN, GATEWAY_MAIN } from "../support/processes.ts";
import { type RunningScript, startScript } from "../support/script.ts";
import type { FileInfoOutcome } from "./children/file-info-load.ts";

/**
 * R2: gateway and host agent in two network namespaces joined by a veth pair. Under a file_info load the link
 * goes down (packets vanish, as in a partition) and comes back: while it is down every call ends in 504
 * host_timeout at its deadline, no call hangs, and afterwards calls succeed again with nothing restarted.
 */

const AGENT_TIMEOUT_MS = 1_000;
/** A call not over by then hangs. */
const MARGIN_MS = 1_000;
const WORKERS = 4;
const UP_BEFORE_MS = 2_000;
const DOWN_MS = 4_000;
const UP_AFTER_MS = 8_000;
const AGENT_PORT = 50_051;
const LOAD_SCRIPT = fileURLToPath(new URL("./children/file-info-load.ts", import.meta.url));

let net: NamespacePair | undefined;
let dataDir: string;
let store: Store;
let agent: RunningScript | undefined;
let gateway: RunningScript | undefined;
let outcomes: FileInfoOutcome[] = [];
let downAt = 0;
let upAt = 0;
const figures: Record<string, number> = {};

/** Starts a process in a namespace and waits for its "listening" log line. */
async function startListening(
  namespace: string,
  main: string,
  env: NodeJS.ProcessEnv,
): Promise<{ script: RunningScript; port: number }> {
  const script = startScript([...(net as NamespacePair).exec(namespace), process.execPath, main], env);
  const line = await script.waitForLine((text) => text.includes('"msg":"listening"'));
  return { script, port: Number((JSON.parse(line) as { port: number }).port) };
}

async function stop(script: RunningScript | undefined): Promise<void> {
  if (!script || script.child.exitCode !== null || script.child.signalCode !== null) return;
  script.child.kill("SIGTERM");
  const timer = setTimeout(() => script.child.kill("SIGKILL"), 10_000);
  await script.done;
  clearTimeout(timer);
}

beforeAll(async () => {
  // 10.213.7.0/30 exists only inside these two namespaces.
  net = createNamespacePair({ prefix: "r2", subnet: "10.213.7" });
  dataDir = mkdtempSync(join(tmpdir(), "r2-gateway-"));
  store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
  const agentAddress = `${net.addressB}:${AGENT_PORT}`;
  ({ script: agent } = await startListening(net.b, AGENT_MAIN, {
    AGENT_LISTEN: agentAddress,
    AGENT_METRICS_LISTEN: "off",
    AGENT_CHROMIUM_PATH: "none",
    AGENT_DATA_DIR: join(dataDir, "host-agent"),
    LOG_LEVEL: "info",
  }));
  let port: number;
  ({ script: gateway, port } = await startListening(net.a, GATEWAY_MAIN, {
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: dataDir,
    HOST_AGENTS: agentAddress,
    HOST_CHECK_INTERVAL_MS: "500",
    AGENT_TIMEOUT_MS: String(AGENT_TIMEOUT_MS),
    LOG_LEVEL: "info",
  }));
  const organizationId = `org-${newId(8)}`;
  const { key } = await createApiKey(store, organizationId, "r2");
  // Created through the API from inside the gateway's namespace, so the agent starts it.
  const created = startScript(
    [
      ...net.exec(net.a),
      process.execPath,
      "-e",
      `fetch("http://127.0.0.1:${port}/browsers", { method: "POST", headers: { authorization: "Bearer ${key}" } })
      .then((r) => r.json()).then((b) => console.log(JSON.stringify(b)))`,
    ],
    {},
  );
  const { stdout: createdOut } = await created.done;
  const sessionId = (JSON.parse(createdOut.trim()) as { session_id: string }).session_id;

  const load = startScript([...net.exec(net.a), process.execPath, LOAD_SCRIPT], {
    LOAD_URL: `http://127.0.0.1:${port}`,
    LOAD_API_KEY: key,
    LOAD_SESSION: sessionId,
    LOAD_WORKERS: String(WORKERS),
    LOAD_DURATION_MS: String(UP_BEFORE_MS + DOWN_MS + UP_AFTER_MS),
    LOAD_TIMEOUT_MS: String(AGENT_TIMEOUT_MS + MARGIN_MS),
  });
  await load.waitForLine((line) => line.includes('"ready"'));
  await new Promise((resolve) => setTimeout(resolve, UP_BEFORE_MS));
  downAt = Date.now();
  net.linkDown();
  await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
  upAt = Date.now();
  net.linkUp();
  const { code, stdout, stderr } = await load.done;
  if (code !== 0) throw new Error(`file_info load failed (${code}): ${stderr}`);
  outcomes = (JSON.parse(stdout.trim().split("\n").at(-1) as string) as { outcomes: FileInfoOutcome[] }).outcomes;
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([stop(gateway), stop(agent)]);
  net?.destroy();
  await store?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  console.info(`R2 figures: ${JSON.stringify(figures)}`);
});

const endOf = (outcome: FileInfoOutcome) => outcome.startedAt + outcome.ms;

describe("R2 network partition between gateway and host agent", () => {
  it("serves file_info over the link before the partition", () => {
    const before = outcomes.filter((outcome) => endOf(outcome) < downAt);
    figures.okBefore = before.length;
    expect(before.length).toBeGreaterThan(20);
    expect(before.every((outcome) => outcome.status === 200)).toBe(true);
  });

  it("answers 504 host_timeout, retryable, at the deadline for every call made while the link is down", () => {
    const during = outcomes.filter((outcome) => outcome.startedAt > downAt + 100 && endOf(outcome) < upAt);
    figures.callsDuringPartition = during.length;
    expect(during.length).toBeGreaterThanOrEqual(WORKERS * 2);
    for (const outcome of during) {
      expect(outcome).toMatchObject({ status: 504, code: "host_timeout", retry: "true" });
      expect(outcome.ms).toBeGreaterThanOrEqual(AGENT_TIMEOUT_MS - 50);
      expect(outcome.ms).toBeLessThan(AGENT_TIMEOUT_MS + MARGIN_MS);
    }
    figures.timeoutMinMs = Math.round(Math.min(...during.map((outcome) => outcome.ms)));
    figures.timeoutMaxMs = Math.round(Math.max(...during.map((outcome) => outcome.ms)));
  });

  it(`lets no call hang: every call ends within the deadline plus ${MARGIN_MS} ms, with 200 or 504`, () => {
    figures.calls = outcomes.length;
    expect(outcomes.filter((outcome) => outcome.status === 0)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 504)).toEqual([]);
    figures.slowestMs = Math.round(Math.max(...outcomes.map((outcome) => outcome.ms)));
    expect(figures.slowestMs).toBeLessThan(AGENT_TIMEOUT_MS + MARGIN_MS);
  });

  it("serves file_info again once the link is back, with nothing restarted", () => {
    const after = outcomes.filter((outcome) => outcome.startedAt > upAt);
    const firstOk = after.find((outcome) => outcome.status === 200);
    expect(firstOk).toBeDefined();
    figures.recoveryMs = Math.round(endOf(firstOk as FileInfoOutcome) - upAt);
    expect(figures.recoveryMs).toBeLessThan(UP_AFTER_MS - 2_000);
    // Once one call went through, all the rest do.
    const rest = after.filter((outcome) => outcome.startedAt > (firstOk as FileInfoOutcome).startedAt);
    figures.okAfter = rest.filter((outcome) => outcome.status === 200).length;
    expect(rest.length).toBeGreaterThan(20);
    expect(rest.every((outcome) => outcome.status === 200)).toBe(true);
    expect(gateway?.child.exitCode).toBeNull();
    expect(agent?.child.exitCode).toBeNull();
  });
});
