import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HostTls } from "../../packages/gateway/src/hosts/host-pool.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";

const DEV_CERTS = fileURLToPath(new URL("../../scripts/dev-certs.sh", import.meta.url));

let dir: string;
/** What scripts/dev-certs.sh writes: a CA, an agent certificate for localhost/127.0.0.1, a gateway client certificate. */
let certs: string;
/** A second, unrelated run of the script: a CA the agents do not trust and that did not sign them. */
let strangerCerts: string;
/** An agent certificate from the right CA that names only `elsewhere.test`, not the address it is dialled at. */
let misnamed: { cert: string; key: string };

let system: System;
const started: (AgentProcess | GatewayProcess)[] = [];

function devCerts(out: string): string {
  execFileSync("bash", [DEV_CERTS, out], { stdio: "pipe" });
  return out;
}

function issueMisnamedAgentCertificate(ca: string, out: string): { cert: string; key: string } {
  const key = join(out, "misnamed.key");
  const csr = join(out, "misnamed.csr");
  const cert = join(out, "misnamed.crt");
  const extensions = join(out, "misnamed.ext");
  writeFileSync(extensions, "subjectAltName=DNS:elsewhere.test\nextendedKeyUsage=serverAuth\n");
  execFileSync("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]);
  execFileSync("openssl", ["req", "-new", "-key", key, "-subj", "/CN=elsewhere.test", "-out", csr]);
  execFileSync("openssl", [
    "x509",
    ...["-req", "-in", csr, "-CA", join(ca, "ca.crt"), "-CAkey", join(ca, "ca.key")],
    ...["-set_serial", "4242", "-days", "2", "-extfile", extensions, "-out", cert],
  ]);
  return { cert, key };
}

const serverTls = (files: string) => ({
  AGENT_TLS_CERT: join(files, "agent.crt"),
  AGENT_TLS_KEY: join(files, "agent.key"),
});
/** What the test itself dials agents with to start sessions on them: the CA and no client certificate. */
const trusting = (files: string): HostTls => ({
  ca: readFileSync(join(files, "ca.crt")),
  cert: undefined,
  key: undefined,
});
const clientCertificate = (files: string) => ({
  AGENT_TLS_CLIENT_CERT: join(files, "gateway.crt"),
  AGENT_TLS_CLIENT_KEY: join(files, "gateway.key"),
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tls-test-"));
  certs = devCerts(join(dir, "dev"));
  strangerCerts = devCerts(join(dir, "stranger"));
  misnamed = issueMisnamedAgentCertificate(certs, dir);
  // The system's own pair speaks mTLS: the production set-up.
  system = await startSystem({
    store: "sqlite",
    agentEnv: { ...serverTls(certs), AGENT_TLS_CLIENT_CA: join(certs, "ca.crt") },
    gatewayEnv: { AGENT_TLS_CA: join(certs, "ca.crt"), ...clientCertificate(certs) },
  });
});

afterAll(async () => {
  await Promise.allSettled(started.map((process) => process.stop()));
  await system?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function agent(env: NodeJS.ProcessEnv): Promise<AgentProcess> {
  const process = await startAgent(env);
  started.push(process);
  return process;
}

async function gateway(env: NodeJS.ProcessEnv): Promise<GatewayProcess> {
  const process = await startGatewayProcess({ ...system.storeEnv, ...env });
  started.push(process);
  return process;
}

let sessions = 0;
/**
 * GET file_info of `/` through `via` on a session running on `host`: the system's own session on
 * its agent (an agent runs one session at a time), else a new one started there by the test with
 * credentials the agent accepts (plaintext for an agent without TLS).
 */
async function fileInfoThrough(via: GatewayProcess, host: AgentProcess, hostTls?: HostTls): Promise<Response> {
  const session =
    host === system.agent
      ? system.session
      : await system.newSession(system.organizationId, `tls-${++sessions}`, host.address, { tls: hostTls });
  return fetch(`${via.url}/browsers/${session.id}/fs/file_info?path=/`, {
    headers: { authorization: `Bearer ${system.apiKey}` },
  });
}

async function expectHostUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(502);
  expect(await res.json()).toMatchObject({ code: "host_unavailable" });
}

describe("TLS between gateway and host agent", () => {
  it("serves file_info over TLS when the gateway trusts the agent's CA", async () => {
    const tlsAgent = await agent(serverTls(certs));
    const tlsGateway = await gateway({ AGENT_TLS_CA: join(certs, "ca.crt") });
    const res = await fileInfoThrough(tlsGateway, tlsAgent, trusting(certs));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ path: "/", is_dir: true });
  });

  it("serves file_info over mTLS when the gateway presents a client certificate from the agent's client CA", async () => {
    const res = await system.api(`/browsers/${system.session.name}/fs/file_info?path=/`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ path: "/", is_dir: true });
  });

  it("answers 502 host_unavailable when an mTLS agent refuses a gateway without a client certificate", async () => {
    const noClientCertificate = await gateway({ AGENT_TLS_CA: join(certs, "ca.crt") });
    await expectHostUnavailable(await fileInfoThrough(noClientCertificate, system.agent));
  });

  it("answers 502 host_unavailable when an mTLS agent refuses a client certificate from another CA", async () => {
    const strangerClient = await gateway({ AGENT_TLS_CA: join(certs, "ca.crt"), ...clientCertificate(strangerCerts) });
    await expectHostUnavailable(await fileInfoThrough(strangerClient, system.agent));
  });

  it("answers 502 host_unavailable when the agent's certificate comes from a CA the gateway does not trust", async () => {
    const trustsOtherCa = await gateway({ AGENT_TLS_CA: join(strangerCerts, "ca.crt"), ...clientCertificate(certs) });
    await expectHostUnavailable(await fileInfoThrough(trustsOtherCa, system.agent));
  });

  it("answers 502 host_unavailable when the agent's certificate does not name the address the gateway dials", async () => {
    const misnamedAgent = await agent({ AGENT_TLS_CERT: misnamed.cert, AGENT_TLS_KEY: misnamed.key });
    const tlsGateway = await gateway({ AGENT_TLS_CA: join(certs, "ca.crt") });
    await expectHostUnavailable(
      await fileInfoThrough(tlsGateway, misnamedAgent, { ...trusting(certs), serverName: "elsewhere.test" }),
    );
  });

  it("accepts a certificate naming AGENT_TLS_SERVER_NAME instead of the address dialled", async () => {
    const misnamedAgent = await agent({ AGENT_TLS_CERT: misnamed.cert, AGENT_TLS_KEY: misnamed.key });
    const overriding = await gateway({ AGENT_TLS_CA: join(certs, "ca.crt"), AGENT_TLS_SERVER_NAME: "elsewhere.test" });
    const res = await fileInfoThrough(overriding, misnamedAgent, { ...trusting(certs), serverName: "elsewhere.test" });
    expect(res.status).toBe(200);
  });

  it("answers 502 host_unavailable rather than fall back to plaintext with an agent that does not speak TLS", async () => {
    const plaintextAgent = await agent({});
    const tlsGateway = await gateway({ AGENT_TLS_CA: join(certs, "ca.crt") });
    await expectHostUnavailable(await fileInfoThrough(tlsGateway, plaintextAgent));
  });
});
