import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_OPTIONS, runtimeEnv, type Service, warmCompileCache } from "../../deploy/node-runtime.ts";
import { startAgent, startGatewayProcess } from "../support/processes.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

const DOCKERFILES: Record<Service, string> = {
  gateway: "deploy/docker/gateway.Dockerfile",
  "host-agent": "deploy/docker/host-agent.Dockerfile",
};
const UNITS: Record<Service, string> = {
  gateway: "deploy/systemd/gateway.service",
  "host-agent": "deploy/systemd/host-agent@.service",
};
const MAINS: Record<Service, string> = {
  gateway: "packages/gateway/src/main.ts",
  "host-agent": "packages/host-agent/src/main.ts",
};
const SERVICES = ["gateway", "host-agent"] as const;

describe.each(SERVICES)("the %s's deployment files", (service) => {
  it("run the image with the production NODE_OPTIONS", () => {
    expect(read(DOCKERFILES[service])).toContain(`NODE_OPTIONS="${NODE_OPTIONS[service]}"`);
  });

  it("fill the image's compile cache at build time", () => {
    const dockerfile = read(DOCKERFILES[service]);
    expect(dockerfile).toMatch(/NODE_COMPILE_CACHE=\S+/);
    expect(dockerfile).toContain(`RUN node ${MAINS[service]} --version`);
  });

  it("run the systemd unit with the production NODE_OPTIONS", () => {
    expect(read(UNITS[service])).toContain(`Environment="NODE_OPTIONS=${NODE_OPTIONS[service]}"`);
  });

  it("fill the systemd unit's compile cache before every start", () => {
    const unit = read(UNITS[service]);
    expect(unit).toMatch(/^Environment=NODE_COMPILE_CACHE=\S+$/m);
    expect(unit).toContain(`ExecStartPre=/usr/bin/node /opt/browser-infra/${MAINS[service]} --version`);
  });
});

describe("a service started with a filled compile cache", () => {
  let dir: string;
  let probe: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "node-runtime-"));
    // Reports at exit whether Node loaded its TypeScript stripper (amaro) in this process.
    probe = join(dir, "probe.mjs");
    writeFileSync(
      probe,
      [
        'const loaded = () => process.moduleLoadList.some((m) => m.includes("amaro"));',
        'process.on("exit", () => process.stderr.write("type stripper loaded: " + loaded() + "\\n"));',
      ].join("\n"),
    );
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function envFor(service: Service): NodeJS.ProcessEnv {
    const cache = join(dir, `${service}-cache`);
    warmCompileCache(service, cache);
    const env = runtimeEnv(service, cache);
    return { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS} --import=${probe}` };
  }

  it("the gateway never loads the type stripper", async () => {
    const gateway = await startGatewayProcess({ ...envFor("gateway"), DATA_DIR: join(dir, "data") });
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    await gateway.stop();
    expect(gateway.lines).toContain("type stripper loaded: false");
  });

  it("the host agent never loads the type stripper", async () => {
    const agent = await startAgent(envFor("host-agent"));
    await agent.stop();
    expect(agent.lines).toContain("type stripper loaded: false");
  });
});
