import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MAIN, runtimeEnv, type Service, warmCompileCache } from "../../deploy/node-runtime.ts";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { newId } from "../../packages/gateway/src/store/ids.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { killAll, MARKER_VARIABLE } from "../../packages/host-agent/src/browser/processes.ts";
import { tmpRoot } from "../../packages/host-agent/src/browser/profile.ts";
import { type OwnXvfb, startOwnXvfb } from "../../packages/host-agent/src/display/xvfb.ts";
import { type KeyRecorder, startKeyRecorder } from "../../test/support/key-recorder.ts";
import { createDatabase, type PostgresServer, startPostgres } from "../../test/support/postgres.ts";
import { startXvfb, type Xvfb } from "../../test/support/xvfb.ts";
import { listeningRecord, type ServerProcess, startServerProcess } from "./processes.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BASELINES = join(ROOT, "bench/baselines");
const SESSION_TIMEOUT_SECONDS = 24 * 3600;
/** The screen of every Xvfb that B7 and B8 start: the agents' own and the baselines'. */
export const BROWSER_SCREEN = "1280x800x24";
export const BROWSER_WINDOW = { width: 1280, height: 800 };
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** A host agent that owns a browser slot: its own Xvfb, a warm spare Chromium, a data directory of its own. */
export interface BrowserAgent {
  process: ServerProcess;
  /** AGENT_DATA_DIR: every process the agent starts carries it in BROWSER_INFRA_AGENT_DATA_DIR. */
  dataDir: string;
  /** The agent's own Xvfb, from its "listening" line. */
  display: string;
  /** The X authority file with that display's cookie, when the agent names one in its "listening" line. */
  xauthority: string | undefined;
}

/** A gateway whose only host is a browser agent, on a SQLite store of its own, and a key for it. */
export interface BrowserGateway {
  process: ServerProcess;
  agent: BrowserAgent;
  apiKey: string;
}

/** A gateway's store with the organization, API key and browser session every request uses. */
export interface Tenant {
  store: Store;
  storeEnv: NodeJS.ProcessEnv;
  apiKey: string;
  sessionName: string;
}

/**
 * Everything the benchmarks run against, started by the runner itself. Processes start on demand
 * and are remembered, so each benchmark asks for what it needs and B5 can read every gateway's and
 * the agent's peak RSS afterwards.
 */
export class BenchEnvironment {
  readonly dir = mkdtempSync(join(tmpdir(), "bench-"));
  readonly logDir = join(this.dir, "logs");
  readonly #compileCacheDir = join(this.dir, "compile-cache");
  readonly profileDir: string | undefined;
  // Shared by every replica: proxy secrets sealed by one must open on the other.
  readonly #secretsKey = randomBytes(32).toString("hex");
  readonly #cleanups: (() => Promise<void>)[] = [];
  // Promises, so two benchmarks asking for the same process at once still get one.
  readonly #starting = new Map<string, Promise<ServerProcess>>();
  readonly #processes: ServerProcess[] = [];
  #xvfb: Xvfb | undefined;
  #recorder: KeyRecorder | undefined;
  #postgres: PostgresServer | undefined;
  #tenants = new Map<string, Promise<Tenant>>();
  readonly #warmed = new Set<string>();
  readonly #browserAgents = new Map<string, Promise<BrowserAgent>>();
  #browserGateway: Promise<BrowserGateway> | undefined;
  #tenantSession: Promise<void> | undefined;

  constructor(options: { profileDir?: string }) {
    this.profileDir = options.profileDir;
    mkdirSync(this.logDir);
    if (this.profileDir) mkdirSync(this.profileDir, { recursive: true });
  }

  /** Xvfb plus a real X client window holding the focus, so every key lands somewhere and is counted. */
  async display(): Promise<{ display: string; recorder: KeyRecorder }> {
    if (!this.#xvfb) {
      const xvfb = await startXvfb();
      this.#xvfb = xvfb;
      this.#cleanups.push(() => xvfb.stop());
      const recorder = await startKeyRecorder(xvfb.display);
      this.#recorder = recorder;
      this.#cleanups.push(() => recorder.close());
    }
    return { display: this.#xvfb.display, recorder: this.#recorder as KeyRecorder };
  }

  async postgres(): Promise<PostgresServer> {
    if (!this.#postgres) {
      const server = await startPostgres();
      this.#postgres = server;
      this.#cleanups.push(() => server.stop());
    }
    return this.#postgres;
  }

  async agent(): Promise<ServerProcess> {
    const { display } = await this.display();
    return this.#start(
      "agent",
      MAIN["host-agent"],
      {
        ...this.#production("host-agent"),
        AGENT_LISTEN: "127.0.0.1:0",
        AGENT_METRICS_LISTEN: "127.0.0.1:0",
        DISPLAY: display,
        // B1–B6 measure keys and files: a browser would take the focus from the recorder window.
        AGENT_CHROMIUM_PATH: "none",
        // Its own, never the working directory's ./data/host-agent another agent may hold.
        AGENT_DATA_DIR: join(this.dir, "agent"),
        LOG_LEVEL: "info",
      },
      true,
    );
  }

  /**
   * Agent `name` as a browser host runs it (B7, B8): AGENT_XVFB (an Xvfb of its own), Chromium
   * (a warm spare launched while idle), AGENT_DATA_DIR in the run's folder. Stopping it (SIGTERM)
   * ends its browsers and its Xvfb; whatever still carries its data directory's marker after that
   * is killed at stop().
   */
  browserAgent(name = "browser-agent"): Promise<BrowserAgent> {
    let agent = this.#browserAgents.get(name);
    if (!agent) {
      agent = this.#startBrowserAgent(name);
      this.#browserAgents.set(name, agent);
    }
    return agent;
  }

  /** The browser agent `name` if a benchmark started it (B8 reports B7's agent too). */
  startedBrowserAgent(name = "browser-agent"): Promise<BrowserAgent> | undefined {
    return this.#browserAgents.get(name);
  }

  async #startBrowserAgent(name: string): Promise<BrowserAgent> {
    const dataDir = join(this.dir, name);
    this.#cleanups.push(async () => {
      await killAll({ marker: `${MARKER_VARIABLE}=${dataDir}` });
    });
    const server = await this.#start(
      name,
      MAIN["host-agent"],
      {
        ...this.#production("host-agent"),
        AGENT_LISTEN: "127.0.0.1:0",
        AGENT_METRICS_LISTEN: "127.0.0.1:0",
        AGENT_XVFB: BROWSER_SCREEN,
        AGENT_CHROMIUM_PATH: CHROMIUM_PATH,
        AGENT_DATA_DIR: dataDir,
        LOG_LEVEL: "info",
      },
      true,
    );
    const listening = listeningRecord(server.logFile);
    const display = listening?.display;
    if (typeof display !== "string") throw new Error(`${name} named no display in its "listening" line`);
    const xauthority = typeof listening?.xauthority === "string" ? listening.xauthority : undefined;
    return { process: server, dataDir, display, xauthority };
  }

  /** The gateway of B7: its only host the browser agent, checked every 200 ms, its own SQLite store and key. */
  browserGateway(): Promise<BrowserGateway> {
    this.#browserGateway ??= this.#startBrowserGateway();
    return this.#browserGateway;
  }

  async #startBrowserGateway(): Promise<BrowserGateway> {
    const agent = await this.browserAgent();
    const dataDir = join(this.dir, "browser-gateway");
    const store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
    this.#cleanups.push(() => store.close());
    const { key: apiKey } = await createApiKey(store, `org-bench-${newId(6)}`, "bench");
    const server = await this.#start(
      "browser-gateway",
      MAIN.gateway,
      {
        ...this.#production("gateway"),
        DATA_DIR: dataDir,
        PORT: "0",
        HOST: "127.0.0.1",
        HOST_AGENTS: `127.0.0.1:${agent.process.port}`,
        HOST_CHECK_INTERVAL_MS: "200",
        SECRETS_KEY: this.#secretsKey,
        LOG_LEVEL: "info",
        // B14's upstream proxy is on loopback, which the address policy refuses by default.
        PROXY_ALLOWED_NETWORKS: "127.0.0.0/8",
      },
      true,
    );
    return { process: server, agent, apiKey };
  }

  /**
   * An Xvfb started the way the agent starts its own (same code, same screen) for a baseline's
   * browsers, its processes marked with a folder of the run's own; stopped at stop() at the latest.
   */
  async ownXvfb(name: string): Promise<{ xvfb: OwnXvfb; dir: string }> {
    const dir = join(this.dir, name);
    mkdirSync(dir, { recursive: true });
    const xvfb = await startOwnXvfb(BROWSER_SCREEN, dir);
    this.#cleanups.push(async () => {
      await xvfb.stop();
      await killAll({ marker: `${MARKER_VARIABLE}=${dir}` });
      // The baselines' browsers made their TMPDIRs under it, as the agent's do.
      rmSync(tmpRoot(dir), { recursive: true, force: true });
    });
    return { xvfb, dir };
  }

  /** A tenant per store kind, created once: both PostgreSQL replicas share one database. */
  tenant(kind: "sqlite" | "postgres"): Promise<Tenant> {
    let tenant = this.#tenants.get(kind);
    if (!tenant) {
      tenant = this.#createTenant(kind);
      this.#tenants.set(kind, tenant);
    }
    return tenant;
  }

  /** Gateway `name` (e.g. "gateway-postgres-2") on the tenant's store, with the production log level. */
  async gateway(name: string, kind: "sqlite" | "postgres"): Promise<ServerProcess> {
    const tenant = await this.tenant(kind);
    const agent = await this.agent();
    const gateway = await this.#start(
      name,
      MAIN.gateway,
      {
        ...this.#production("gateway"),
        ...tenant.storeEnv,
        PORT: "0",
        HOST: "127.0.0.1",
        HOST_AGENTS: `127.0.0.1:${agent.port}`,
        SECRETS_KEY: this.#secretsKey,
        LOG_LEVEL: "info",
      },
      true,
    );
    // B1–B3 press keys and read files in the SQLite tenant's session, so it must run on the agent.
    if (kind === "sqlite") {
      this.#tenantSession ??= this.#startSession(gateway, tenant);
      await this.#tenantSession;
    }
    return gateway;
  }

  /**
   * The tenant's session, started as a client starts one (POST /browsers on the agent, the gateway's
   * only host), once. A PostgreSQL gateway on the same agent would stop it (a session its store
   * does not know), but those start only with B4, after B1–B3.
   */
  async #startSession(gateway: ServerProcess, tenant: Tenant): Promise<void> {
    const response = await fetch(`${gateway.url}/browsers`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
      // The idle reaper would end a session left alone while another benchmark runs.
      body: JSON.stringify({ name: tenant.sessionName, timeout_seconds: SESSION_TIMEOUT_SECONDS }),
    });
    if (!response.ok) throw new Error(`POST /browsers answered ${response.status}: ${await response.text()}`);
  }

  async baseline(file: "xdotool-server" | "lstat-server" | "express-rename"): Promise<ServerProcess> {
    const env: NodeJS.ProcessEnv = { PORT: "0" };
    if (file === "xdotool-server") env.DISPLAY = (await this.display()).display;
    return this.#start(file, join(BASELINES, `${file}.ts`), env, false);
  }

  /**
   * B4's PostgreSQL floor, on the PostgreSQL tenant's database; B6 starts a second one. Floors run with
   * the gateway's Node settings, so ratios to them compare like with like.
   */
  async postgresFloor(instance = 1): Promise<ServerProcess> {
    const tenant = await this.tenant("postgres");
    const main = join(BASELINES, "express-rename-postgres.ts");
    return this.#start(
      `express-rename-postgres-${instance}`,
      main,
      { ...this.#production("gateway", main), PORT: "0", DATABASE_URL: tenant.storeEnv.DATABASE_URL },
      false,
    );
  }

  /**
   * A gateway for B10's fleet, from `main` (today's tree, or another commit's checked out for a
   * baseline), with the gateway's production Node settings and `env` besides.
   */
  fleetGateway(name: string, main: string, env: NodeJS.ProcessEnv): Promise<ServerProcess> {
    return this.#start(name, main, { ...this.#production("gateway", main), ...env }, false);
  }

  /** B4's SQLite floor, on the SQLite tenant's database file. */
  async sqliteFloor(): Promise<ServerProcess> {
    const tenant = await this.tenant("sqlite");
    const main = join(BASELINES, "express-rename-sqlite.ts");
    return this.#start(
      "express-rename-sqlite",
      main,
      {
        ...this.#production("gateway", main),
        PORT: "0",
        SQLITE_PATH: sqlitePathIn(tenant.storeEnv.DATA_DIR as string),
      },
      false,
    );
  }

  /**
   * The bare two-hop pair (floor-gateway → floor-agent), on the same display as the real agent, run
   * with the same Node settings as the gateway and the agent, so their speed and memory compare.
   */
  async floor(): Promise<ServerProcess> {
    const { display } = await this.display();
    const agentMain = join(BASELINES, "floor-agent.ts");
    const gatewayMain = join(BASELINES, "floor-gateway.ts");
    const agent = await this.#start(
      "floor-agent",
      agentMain,
      { ...this.#production("host-agent", agentMain), DISPLAY: display },
      false,
    );
    return this.#start(
      "floor-gateway",
      gatewayMain,
      { ...this.#production("gateway", gatewayMain), PORT: "0", FLOOR_AGENT: `127.0.0.1:${agent.port}` },
      false,
    );
  }

  /**
   * B9's floor pair (floor-cdp-gateway → floor-cdp-agent): the WebSocket → gRPC stream → WebSocket
   * bridge with nothing else, with the gateway's and the agent's Node settings. Its URL for a browser
   * is `ws://127.0.0.1:<port>/cdp/<the browser's DevTools URL, percent-encoded>`.
   */
  async cdpFloor(): Promise<ServerProcess> {
    const agentMain = join(BASELINES, "floor-cdp-agent.ts");
    const gatewayMain = join(BASELINES, "floor-cdp-gateway.ts");
    const agent = await this.#start("floor-cdp-agent", agentMain, this.#production("host-agent", agentMain), false);
    return this.#start(
      "floor-cdp-gateway",
      gatewayMain,
      { ...this.#production("gateway", gatewayMain), PORT: "0", FLOOR_AGENT: `127.0.0.1:${agent.port}` },
      false,
    );
  }

  /** The floor agent, if a benchmark started it: B5 compares the agent's memory with it. */
  floorAgent(): ServerProcess | undefined {
    return this.#processes.find((p) => p.name === "floor-agent");
  }

  /** Every gateway and agent process started so far. */
  measuredProcesses(): ServerProcess[] {
    return this.#processes.filter((p) => p.name.startsWith("gateway") || p.name === "agent");
  }

  /** Processes that ended before stop() was called, and how: the usual cause of a failed request. */
  exitedEarly(): string[] {
    return this.#processes.filter((p) => p.exit() !== undefined).map((p) => `${p.name} (${p.exit()})`);
  }

  /** Stops everything; `keepLogs` leaves the temporary folder (logs, data) behind for a post-mortem. */
  async stop(options: { keepLogs?: boolean } = {}): Promise<void> {
    // Processes first, so the profiles get written and nothing outlives the database it uses.
    await Promise.allSettled([...this.#starting.values()]);
    await Promise.allSettled(this.#processes.map((p) => p.stop()));
    for (const cleanup of this.#cleanups.reverse()) await cleanup().catch(() => undefined);
    if (!options.keepLogs) rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * What production runs the service with (deploy/node-runtime.ts), its compile cache filled first as
   * on any host where the service has started before, so B5 measures what a restarted process uses.
   * `main` runs another entry point (a floor) the way the service runs.
   */
  #production(service: Service, main = MAIN[service]): NodeJS.ProcessEnv {
    if (!this.#warmed.has(main)) {
      warmCompileCache(service, this.#compileCacheDir, main);
      this.#warmed.add(main);
    }
    return runtimeEnv(service, this.#compileCacheDir);
  }

  #start(name: string, main: string, env: NodeJS.ProcessEnv, profiled: boolean): Promise<ServerProcess> {
    let starting = this.#starting.get(name);
    if (!starting) {
      starting = startServerProcess(name, main, env, join(this.logDir, `${name}.log`), {
        profileDir: profiled ? this.profileDir : undefined,
      }).then((started) => {
        this.#processes.push(started);
        return started;
      });
      this.#starting.set(name, starting);
    }
    return starting;
  }

  async #createTenant(kind: "sqlite" | "postgres"): Promise<Tenant> {
    let storeEnv: NodeJS.ProcessEnv;
    let store: Store;
    if (kind === "postgres") {
      const databaseUrl = await createDatabase((await this.postgres()).url, "bench");
      storeEnv = { DATABASE_URL: databaseUrl };
      store = await openStore({ databaseUrl });
    } else {
      const dataDir = join(this.dir, "sqlite");
      storeEnv = { DATA_DIR: dataDir };
      store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
    }
    this.#cleanups.push(() => store.close());
    const organizationId = `org-bench-${newId(6)}`;
    const { key: apiKey } = await createApiKey(store, organizationId, "bench");
    return { store, storeEnv, apiKey, sessionName: "local" };
  }
}
