import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MAIN, runtimeEnv, type Service, warmCompileCache } from "../../deploy/node-runtime.ts";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { newId } from "../../packages/gateway/src/store/ids.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { type KeyRecorder, startKeyRecorder } from "../../test/support/key-recorder.ts";
import { createDatabase, type PostgresServer, startPostgres } from "../../test/support/postgres.ts";
import { startXvfb, type Xvfb } from "../../test/support/xvfb.ts";
import { type ServerProcess, startServerProcess } from "./processes.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BASELINES = join(ROOT, "bench/baselines");
const SESSION_TIMEOUT_SECONDS = 24 * 3600;

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
        LOG_LEVEL: "info",
      },
      true,
    );
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
    return this.#start(
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
    const agent = await this.agent();
    const sessionName = "local";
    await store.browserSessions.insert({
      id: newId(),
      organizationId,
      name: sessionName,
      hostAddress: `127.0.0.1:${agent.port}`,
      createdAt: new Date().toISOString(),
      // The idle reaper would end a session left alone while another benchmark runs.
      timeoutSeconds: SESSION_TIMEOUT_SECONDS,
    });
    return { store, storeEnv, apiKey, sessionName };
  }
}
