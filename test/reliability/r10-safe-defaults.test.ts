import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNamespacePair } from "../support/netns.ts";
import { AGENT_MAIN, CLI_MAIN, GATEWAY_MAIN, startAgent, startGatewayProcess } from "../support/processes.ts";
import { type RunningScript, startScript } from "../support/script.ts";

/**
 * R10: the defaults are the safe ones.
 * - Metrics: the gateway's GET /metrics (agent addresses, per-route counts) answers only loopback
 *   clients unless METRICS_PUBLIC=true; no packaged example makes the agent's metrics listen on every
 *   interface without saying so.
 * - Data files: DATA_DIR (the store's key hashes, proxy hosts and usernames, sealed secrets, the
 *   secrets key), the quick start's logs and AGENT_DATA_DIR are 0700 and their files 0600, under a
 *   umask that would make them readable by all; what an earlier run left open is tightened, and said.
 * - A configuration error exits with 2 (which the systemd units do not restart) and one line on
 *   stderr; every other failure exits with 1.
 */

// Every process this file starts inherits it: the usual umask, under which a file made without an
// explicit mode is readable by every user of the machine.
process.umask(0o022);

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const QUICKSTART = `${ROOT}scripts/quickstart.ts`;
const CONFIGURATION_ERROR = 2;

const scratch = mkdtempSync(join(tmpdir(), "r10-"));
const figures: Record<string, unknown> = {};
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  console.info(`R10 figures: ${JSON.stringify(figures)}`);
});
let scratchCount = 0;
/** A path under this file's scratch directory that does not exist yet. */
function freshPath(name: string): string {
  scratchCount += 1;
  return join(scratch, `${scratchCount}-${name}`);
}

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

/** Runs a process to its end (killed after 20 s: a configuration it accepted would run forever). */
async function runToExit(
  main: string,
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<{ code: number | null; stdout: string[]; stderr: string[] }> {
  const script = startScript([process.execPath, main, ...args], env);
  const timer = setTimeout(() => script.child.kill("SIGKILL"), 20_000);
  const { code, stdout, stderr } = await script.done;
  clearTimeout(timer);
  const lines = (text: string) => text.split("\n").filter((line) => line !== "");
  return { code, stdout: lines(stdout), stderr: lines(stderr) };
}

/** Ends a process started with startScript; SIGKILL after 10 s. */
async function stopScript(script: RunningScript | undefined): Promise<void> {
  if (!script || script.child.exitCode !== null || script.child.signalCode !== null) return;
  script.child.kill("SIGTERM");
  const timer = setTimeout(() => script.child.kill("SIGKILL"), 10_000);
  await script.done;
  clearTimeout(timer);
}

/**
 * Where a client whose address is not loopback can reach a gateway listening on every interface:
 * from one of this machine's own non-loopback addresses, or, on a machine that has none, from a
 * network namespace of its own towards the gateway's namespace.
 */
interface Vantage {
  /** Argument vector prefix that runs a command beside the gateway. */
  gatewaySide: string[];
  /** Argument vector prefix that runs the outside client. */
  outsideSide: string[];
  /** The gateway's address as the outside client dials it. */
  gatewayAddress: string;
  /** The address the outside client's socket is bound to. */
  outsideAddress: string;
  destroy(): void;
}

function findVantage(): Vantage {
  const own = Object.values(networkInterfaces())
    .flat()
    .find((address) => address && !address.internal && address.family === "IPv4");
  if (own) {
    figures.outsideClient = "this machine's own address";
    return {
      gatewaySide: [],
      outsideSide: [],
      gatewayAddress: own.address,
      outsideAddress: own.address,
      destroy: () => {},
    };
  }
  // 10.213.10.0/30 exists only inside these two namespaces.
  const net = createNamespacePair({ prefix: "r10", subnet: "10.213.10" });
  figures.outsideClient = "a network namespace";
  return {
    gatewaySide: net.exec(net.a),
    outsideSide: net.exec(net.b),
    gatewayAddress: net.addressA,
    outsideAddress: net.addressB,
    destroy: net.destroy,
  };
}

const GET = `const [url, localAddress] = process.argv.slice(1);
require("node:http").get(url, { localAddress: localAddress || undefined }, (res) => {
  let body = "";
  res.on("data", (chunk) => { body += chunk; });
  res.on("end", () => console.log(JSON.stringify({ status: res.statusCode, body })));
}).on("error", (error) => console.log(JSON.stringify({ error: error.code })));`;

/** GET by a client process (so that it can run in another namespace), from `localAddress` when given. */
async function get(
  side: string[],
  url: string,
  localAddress?: string,
): Promise<{ status?: number; body?: string; error?: string }> {
  const { code, stdout, stderr } = await startScript(
    [...side, process.execPath, "-e", GET, url, ...(localAddress ? [localAddress] : [])],
    {},
  ).done;
  if (code !== 0) throw new Error(`GET ${url} failed (${code}): ${stderr}`);
  return JSON.parse(stdout.trim());
}

describe("R10 metrics: loopback only unless asked otherwise", () => {
  let vantage: Vantage;
  const gateways: RunningScript[] = [];

  beforeAll(() => {
    vantage = findVantage();
  });

  afterAll(async () => {
    await Promise.allSettled(gateways.map(stopScript));
    vantage?.destroy();
  });

  /** A gateway on every interface (HOST), beside the vantage's gateway side; resolves with its port. */
  async function gatewayOn(host: string, env: NodeJS.ProcessEnv = {}): Promise<number> {
    const gateway = startScript([...vantage.gatewaySide, process.execPath, GATEWAY_MAIN], {
      HOST: host,
      PORT: "0",
      DATA_DIR: freshPath("metrics"),
      LOG_LEVEL: "info",
      ...env,
    });
    gateways.push(gateway);
    const line = await gateway.waitForLine((text) => text.includes('"msg":"listening"'));
    return Number((JSON.parse(line) as { port: number }).port);
  }

  const fromOutside = (port: number) =>
    get(vantage.outsideSide, `http://${vantage.gatewayAddress}:${port}/metrics`, vantage.outsideAddress);
  const fromLoopback = (port: number, address = "127.0.0.1") =>
    get(vantage.gatewaySide, `http://${address}:${port}/metrics`);

  it("answers GET /metrics to a loopback client, and 404 not_found, as if there were no such route, to any other", async () => {
    const port = await gatewayOn("0.0.0.0");
    const loopback = await fromLoopback(port);
    expect(loopback.status).toBe(200);
    expect(loopback.body).toContain("gateway_http_requests_total");
    const outside = await fromOutside(port);
    expect(outside.status).toBe(404);
    expect(JSON.parse(outside.body ?? "")).toEqual({ code: "not_found", message: "no route for GET /metrics" });
  });

  it("tells loopback from the rest on a dual-stack socket too: ::1 and ::ffff:127.0.0.1 are answered, ::ffff:<address> is not", async () => {
    const port = await gatewayOn("::");
    expect((await fromLoopback(port, "[::1]")).status).toBe(200);
    expect((await fromLoopback(port, "127.0.0.1")).status).toBe(200);
    expect((await fromOutside(port)).status).toBe(404);
  });

  it("answers every client with METRICS_PUBLIC=true", async () => {
    const port = await gatewayOn("0.0.0.0", { METRICS_PUBLIC: "true" });
    const outside = await fromOutside(port);
    expect(outside.status).toBe(200);
    expect(outside.body).toContain("gateway_http_requests_total");
    expect((await fromLoopback(port)).status).toBe(200);
  });

  it("no packaged example serves metrics on every interface, or opens the gateway's, without a line saying how to protect them", () => {
    const examples = [
      "deploy/docker/gateway.Dockerfile",
      "deploy/docker/host-agent.Dockerfile",
      "deploy/systemd/gateway.env.example",
      "deploy/systemd/host-agent.env.example",
      "deploy/systemd/gateway.service",
      "deploy/systemd/host-agent@.service",
      "docker-compose.yml",
    ];
    for (const example of examples) {
      const settings = readFileSync(join(ROOT, example), "utf8")
        .split("\n")
        .filter((line) => !line.trim().startsWith("#"));
      for (const line of settings) {
        expect(line, example).not.toMatch(/AGENT_METRICS_LISTEN\s*[=:]\s*"?(0\.0\.0\.0|\[?::\]?):/);
        expect(line, example).not.toMatch(/METRICS_PUBLIC\s*[=:]\s*"?true/);
      }
    }
  });
});

describe("R10 data files: private whatever the umask", () => {
  it("the gateway makes a new DATA_DIR 0700, and gateway.db, its -wal and -shm, and secrets.key 0600", async () => {
    const dataDir = join(freshPath("gateway"), "data");
    const gateway = await startGatewayProcess({ DATA_DIR: dataDir });
    try {
      expect(mode(dataDir)).toBe("700");
      // While the gateway runs, SQLite's write-ahead log and shared-memory index exist beside the database.
      for (const name of ["gateway.db", "gateway.db-wal", "gateway.db-shm", "secrets.key"]) {
        expect({ name, mode: mode(join(dataDir, name)) }).toEqual({ name, mode: "600" });
      }
    } finally {
      await gateway.stop();
    }
  });

  it("the gateway tightens a DATA_DIR and files an earlier run left open to others, and logs each", async () => {
    const dataDir = freshPath("gateway-loose");
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    // An empty file is a new database to SQLite.
    writeFileSync(join(dataDir, "gateway.db"), "", { mode: 0o644 });
    writeFileSync(join(dataDir, "secrets.key"), `${"ab".repeat(32)}\n`, { mode: 0o644 });
    const gateway = await startGatewayProcess({ DATA_DIR: dataDir });
    try {
      expect(mode(dataDir)).toBe("700");
      expect(mode(join(dataDir, "gateway.db"))).toBe("600");
      expect(mode(join(dataDir, "secrets.key"))).toBe("600");
      const said = (await gateway.settledLines())
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.msg === "DATA_DIR: other users could read this; made it private")
        .map(({ path, from, to }) => ({ path, from, to }));
      expect(said).toEqual([
        { path: dataDir, from: "755", to: "700" },
        { path: join(dataDir, "gateway.db"), from: "644", to: "600" },
        { path: join(dataDir, "secrets.key"), from: "644", to: "600" },
      ]);
    } finally {
      await gateway.stop();
    }
  });

  it("the admin CLI, run before any gateway, makes DATA_DIR 0700 and the store 0600", async () => {
    const dataDir = join(freshPath("cli"), "data");
    const { code } = await runToExit(CLI_MAIN, { DATA_DIR: dataDir }, ["keys", "create", "--org", "r10"]);
    expect(code).toBe(0);
    expect(mode(dataDir)).toBe("700");
    for (const name of readdirSync(dataDir))
      expect({ name, mode: mode(join(dataDir, name)) }).toEqual({ name, mode: "600" });
  });

  it("the host agent makes a new AGENT_DATA_DIR 0700", async () => {
    const dataDir = join(freshPath("agent"), "data");
    const agent = await startAgent({ AGENT_DATA_DIR: dataDir });
    try {
      expect(mode(dataDir)).toBe("700");
    } finally {
      await agent.stop();
    }
  });

  it("the host agent tightens an AGENT_DATA_DIR open to others, and logs it", async () => {
    const dataDir = freshPath("agent-loose");
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const agent = await startAgent({ AGENT_DATA_DIR: dataDir });
    try {
      expect(mode(dataDir)).toBe("700");
      const said = await agent.waitForLog(
        (line) => line.msg === "AGENT_DATA_DIR: other users could read it; made it private",
      );
      expect(said).toMatchObject({ dataDir, from: "755", to: "700" });
    } finally {
      await agent.stop();
    }
  });

  describe("the quick start", () => {
    let dataDir: string;
    let child: ChildProcess;
    let output = "";

    beforeAll(async () => {
      // An earlier run's data, from before its files were private.
      dataDir = freshPath("quickstart");
      mkdirSync(join(dataDir, "logs"), { recursive: true, mode: 0o755 });
      chmodSync(dataDir, 0o755);
      writeFileSync(join(dataDir, "logs", "gateway.log"), "an earlier run\n", { mode: 0o644 });
      child = spawn(process.execPath, [QUICKSTART], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: "0", QUICKSTART_BROWSERS: "1" },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      for (const stream of [child.stdout, child.stderr]) {
        stream?.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8");
        });
      }
      const deadline = Date.now() + 90_000;
      while (!output.includes("Ctrl-C stops everything.")) {
        if (Date.now() > deadline || child.exitCode !== null) {
          throw new Error(`the quick start did not come up:\n${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }, 100_000);

    afterAll(async () => {
      if (!child || child.exitCode !== null || child.pid === undefined) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const timer = setTimeout(() => process.kill(-(child.pid as number), "SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    }, 40_000);

    it("keeps DATA_DIR, its logs, the store and the secrets key private, and says what it tightened", () => {
      expect(mode(dataDir)).toBe("700");
      expect(mode(join(dataDir, "logs"))).toBe("700");
      expect(mode(join(dataDir, "host-agent-1"))).toBe("700");
      const logs = readdirSync(join(dataDir, "logs"));
      expect(logs.sort()).toEqual(["gateway.log", "host-agent-1.log"]);
      for (const name of logs) {
        expect({ name, mode: mode(join(dataDir, "logs", name)) }).toEqual({ name, mode: "600" });
      }
      for (const name of ["gateway.db", "gateway.db-wal", "gateway.db-shm", "secrets.key"]) {
        expect({ name, mode: mode(join(dataDir, name)) }).toEqual({ name, mode: "600" });
      }
      expect(output).toContain(`other users could read ${dataDir} (mode 755); made it 700`);
      expect(output).toContain(`other users could read ${join(dataDir, "logs")} (mode 755); made it 700`);
      expect(output).toContain(
        `other users could read ${join(dataDir, "logs", "gateway.log")} (mode 644); made it 600`,
      );
    });
  });
});

describe("R10 configuration errors: exit 2, one line", () => {
  /** Exit code 2, exactly one line on stderr naming the problem, no stack trace, nothing else. */
  function expectConfigurationError(
    outcome: { code: number | null; stdout: string[]; stderr: string[] },
    prefix: string,
    says: RegExp,
  ): void {
    expect(outcome).toMatchObject({ code: CONFIGURATION_ERROR, stdout: [] });
    expect(outcome.stderr).toHaveLength(1);
    expect(outcome.stderr[0]).toMatch(new RegExp(`^${prefix}configuration error: `));
    expect(outcome.stderr[0]).toMatch(says);
    figures.configurationErrorsRefused = Number(figures.configurationErrorsRefused ?? 0) + 1;
  }

  let notACertificate: string;
  beforeAll(() => {
    notACertificate = join(scratch, "not-a-certificate.pem");
    writeFileSync(notACertificate, "hello\n");
  });

  const GATEWAY_CASES: [string, () => NodeJS.ProcessEnv, RegExp][] = [
    [
      "SECRETS_KEY missing with DATABASE_URL",
      () => ({ DATABASE_URL: "postgres://browser_infra@127.0.0.1:1/browser_infra" }),
      /SECRETS_KEY is required/,
    ],
    ["a HOST that is no address", () => ({ HOST: "not an address" }), /HOST must be/],
    ["a host agent port out of range", () => ({ HOST_AGENTS: "10.0.0.1:70000" }), /HOST_AGENTS: "10\.0\.0\.1:70000"/],
    ["an unreadable TLS file", () => ({ AGENT_TLS_CA: join(scratch, "absent.pem") }), /AGENT_TLS_CA: cannot read/],
    ["a TLS file that holds no certificate", () => ({ AGENT_TLS_CA: notACertificate }), /AGENT_TLS_CA holds no PEM/],
    ["a bad integer", () => ({ AGENT_TIMEOUT_MS: "soon" }), /AGENT_TIMEOUT_MS must be a whole number/],
  ];

  it.each(GATEWAY_CASES)("the gateway, given %s", async (_name, env, says) => {
    const outcome = await runToExit(GATEWAY_MAIN, { DATA_DIR: freshPath("bad-gateway"), PORT: "0", ...env() });
    expectConfigurationError(outcome, "gateway: ", says);
  });

  it("the gateway, given a secrets.key that holds no key", async () => {
    const dataDir = freshPath("bad-secrets-key");
    mkdirSync(dataDir, { mode: 0o700 });
    writeFileSync(join(dataDir, "secrets.key"), "not a key\n", { mode: 0o600 });
    const outcome = await runToExit(GATEWAY_MAIN, { DATA_DIR: dataDir, PORT: "0" });
    expectConfigurationError(outcome, "gateway: ", /secrets\.key must hold a 32-byte key/);
  });

  const AGENT_CASES: [string, () => NodeJS.ProcessEnv, RegExp][] = [
    ["a listen port out of range", () => ({ AGENT_LISTEN: "127.0.0.1:70000" }), /AGENT_LISTEN must be/],
    [
      "a metrics port out of range",
      () => ({ AGENT_METRICS_LISTEN: "127.0.0.1:99999" }),
      /AGENT_METRICS_LISTEN must be/,
    ],
    [
      "an unreadable TLS file",
      () => ({ AGENT_TLS_CERT: join(scratch, "absent.pem"), AGENT_TLS_KEY: join(scratch, "absent.key") }),
      /AGENT_TLS_CERT: cannot read/,
    ],
    [
      "TLS files that hold no certificate",
      () => ({ AGENT_TLS_CERT: notACertificate, AGENT_TLS_KEY: notACertificate }),
      /not a PEM certificate and its key/,
    ],
    ["a bad integer", () => ({ AGENT_MAX_QUEUED_PRESSES: "many" }), /AGENT_MAX_QUEUED_PRESSES must be/],
  ];

  it.each(AGENT_CASES)("the host agent, given %s", async (_name, env, says) => {
    const outcome = await runToExit(AGENT_MAIN, {
      AGENT_LISTEN: "127.0.0.1:0",
      AGENT_METRICS_LISTEN: "off",
      AGENT_CHROMIUM_PATH: "none",
      AGENT_DATA_DIR: freshPath("bad-agent"),
      ...env(),
    });
    expectConfigurationError(outcome, "host-agent: ", says);
  });

  it("the host agent, given the AGENT_DATA_DIR of an agent that runs", async () => {
    const dataDir = freshPath("shared-agent-dir");
    const first = await startAgent({ AGENT_DATA_DIR: dataDir });
    try {
      const outcome = await runToExit(AGENT_MAIN, {
        AGENT_LISTEN: "127.0.0.1:0",
        AGENT_METRICS_LISTEN: "off",
        AGENT_CHROMIUM_PATH: "none",
        AGENT_DATA_DIR: dataDir,
      });
      expectConfigurationError(outcome, "host-agent: ", /is in use by another host agent/);
    } finally {
      await first.stop();
    }
  });

  const CLI_CASES: [string, () => NodeJS.ProcessEnv, RegExp][] = [
    ["a DATABASE_URL that is not PostgreSQL's", () => ({ DATABASE_URL: "mysql://db/x" }), /DATABASE_URL must be/],
    ["an unreadable TLS file", () => ({ AGENT_TLS_CA: join(scratch, "absent.pem") }), /AGENT_TLS_CA: cannot read/],
    ["a bad integer", () => ({ PORT: "eighty" }), /PORT must be a whole number/],
  ];

  it.each(CLI_CASES)("the admin CLI, given %s", async (_name, env, says) => {
    const outcome = await runToExit(CLI_MAIN, { DATA_DIR: freshPath("bad-cli"), ...env() }, ["keys", "list"]);
    expectConfigurationError(outcome, "", says);
  });

  it("a failure that is no configuration error (the port is taken) still exits with 1, which systemd retries", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const address = taken.address();
      const port = typeof address === "object" && address ? address.port : 0;
      const outcome = await runToExit(GATEWAY_MAIN, { DATA_DIR: freshPath("port-taken"), PORT: String(port) });
      expect(outcome.code).toBe(1);
      expect(outcome.stderr.join("\n")).toContain("EADDRINUSE");
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("every systemd unit treats exit status 2 as final", () => {
    const units = readdirSync(join(ROOT, "deploy/systemd")).filter((name) => name.endsWith(".service"));
    expect(units.length).toBeGreaterThan(0);
    for (const unit of units) {
      const text = readFileSync(join(ROOT, "deploy/systemd", unit), "utf8");
      expect({ unit, final: /^RestartPreventExitStatus=.*\b2\b/m.test(text) }).toEqual({ unit, final: true });
    }
  });
});
