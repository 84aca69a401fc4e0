import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SECRETS_KEY_FILE } from "../../packages/gateway/src/proxies/secrets-key.ts";
import { expectError, expectProxy, json, type ProxyBody } from "../../packages/gateway/test/proxies/http-expect.ts";
import {
  type Listening,
  type LoopbackProxy,
  startLoopbackProxy,
  startTargetSite,
  TEST_TLS,
} from "../../packages/gateway/test/proxies/loopback-proxy.ts";
import { filesUnder } from "../support/files.ts";
import { GATEWAY_MAIN, type GatewayProcess, startGatewayProcess, startProcess } from "../support/processes.ts";
import { type StoreKind, type System, startSystem } from "../support/system.ts";

const USERNAME = "vault-user";
const PASSWORD = "Pl41nt3xt-Pa55word-n3ver-st0red";
// The base64 lines of the CA certificate: any of them in the store or a log would be the bundle in clear.
const CA_LINES = TEST_TLS.ca.split("\n").filter((line) => line.length >= 40 && !line.startsWith("-----"));

function expectNoSecret(text: string): void {
  expect(text).not.toContain(PASSWORD);
  for (const line of CA_LINES) expect(text).not.toContain(line);
}

let site: Listening;
let guarded: LoopbackProxy;

beforeAll(async () => {
  [site, guarded] = await Promise.all([
    startTargetSite(),
    startLoopbackProxy({ credentials: { username: USERNAME, password: PASSWORD } }),
  ]);
});

afterAll(async () => {
  await Promise.all([site, guarded].map((server) => server?.close()));
});

describe.each<StoreKind>(["sqlite", "postgres"])("proxy secrets on %s", (kind) => {
  const secretsKey = randomBytes(32).toString("hex");
  let system: System;
  let proxy: ProxyBody;
  /** Every response body the gateway gave about the proxy. */
  const responses: string[] = [];
  const extraGateways: GatewayProcess[] = [];

  async function record(res: Response): Promise<Response> {
    responses.push(await res.clone().text());
    return res;
  }

  beforeAll(async () => {
    const gatewayEnv = {
      PROXY_CHECK_URL: `${site.url}/ip`,
      // The test proxy listens on loopback, which checks may reach only when the operator allows it.
      PROXY_ALLOWED_NETWORKS: "127.0.0.0/8",
      ...(kind === "postgres" ? { SECRETS_KEY: secretsKey } : {}),
    };
    system = await startSystem({ store: kind, postgresUrl: inject("postgresUrl"), gatewayEnv });
    const config = {
      host: "127.0.0.1",
      port: guarded.port,
      username: USERNAME,
      password: PASSWORD,
      ca_bundle: TEST_TLS.ca,
    };
    proxy = await expectProxy(
      await record(await system.api("/proxies", json("POST", { type: "custom", protocol: "http", config }))),
    );
    await record(await system.api(`/proxies/${proxy.id}`));
    await record(await system.api("/proxies"));
    await record(await system.api(`/proxies/${proxy.id}`, json("PATCH", { name: "vault" })));
    await record(await system.api(`/proxies/${proxy.id}/check`, json("POST")));
    // A refused request that carries the secrets must not echo them either.
    await record(await system.api("/proxies", json("POST", { type: "custom", config: { ...config, port: 0 } })));
  });

  afterAll(async () => {
    await Promise.all(extraGateways.map((gateway) => gateway.stop()));
    await system?.stop();
  });

  it("authenticates to the proxy with the stored password, so the secrets did reach the store", async () => {
    expect(JSON.parse(responses[4] ?? "{}")).toMatchObject({ status: "available" });
  });

  it("keeps neither the password nor the CA bundle in clear in any column of the row", async () => {
    const rows = await system.store.sql.query("SELECT * FROM proxies WHERE id = $1", [proxy.id]);
    expect(rows).toHaveLength(1);
    expectNoSecret(JSON.stringify(rows));
  });

  it("leaves no plaintext password or CA bundle in the database files", async () => {
    let dir: string;
    if (kind === "sqlite") {
      dir = system.storeEnv.DATA_DIR as string;
    } else {
      // Flushes the write-ahead log and every dirty page, so whatever was written is on disk now.
      await system.store.sql.execute("CHECKPOINT");
      dir = (await system.store.sql.query<{ data_directory: string }>("SHOW data_directory"))[0]?.data_directory ?? "";
    }
    const files = filesUnder(dir);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expectNoSecret(file.text);
  });

  it("returns them in no response", () => {
    expect(responses).toHaveLength(6);
    for (const body of responses) expectNoSecret(body);
  });

  it("writes them to no log line", async () => {
    const lines = await system.gateway.settledLines();
    expect(lines.length).toBeGreaterThan(0);
    expectNoSecret(lines.join("\n"));
  });

  it("lets another gateway process with the same key open the stored password", async () => {
    const env = {
      ...system.storeEnv,
      PROXY_CHECK_URL: `${site.url}/ip`,
      PROXY_ALLOWED_NETWORKS: "127.0.0.0/8",
      ...(kind === "postgres" ? { SECRETS_KEY: secretsKey } : {}),
    };
    const other = await startGatewayProcess(env);
    extraGateways.push(other);
    const res = await fetch(`${other.url}/proxies/${proxy.id}/check`, {
      method: "POST",
      headers: { authorization: `Bearer ${system.apiKey}` },
    });
    expect((await expectProxy(res)).status).toBe("available");
  });

  if (kind === "sqlite") {
    it("generates the key once in DATA_DIR, readable by its owner only", () => {
      const file = join(system.storeEnv.DATA_DIR as string, SECRETS_KEY_FILE);
      expect(readFileSync(file, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    });
  }

  if (kind === "postgres") {
    it("refuses to start a gateway on DATABASE_URL without SECRETS_KEY, with one clear line", async () => {
      const gateway = startProcess(GATEWAY_MAIN, { ...system.storeEnv, SECRETS_KEY: "", PORT: "0", HOST: "127.0.0.1" });
      const [code] = await once(gateway.child, "exit");
      expect(code).not.toBe(0);
      expect(gateway.lines).toContainEqual(expect.stringContaining("SECRETS_KEY is required with DATABASE_URL"));
    });

    it("answers 500 from a gateway with another key, without marking the proxy unavailable", async () => {
      const other = await startGatewayProcess({ ...system.storeEnv, SECRETS_KEY: randomBytes(32).toString("hex") });
      extraGateways.push(other);
      const res = await fetch(`${other.url}/proxies/${proxy.id}/check`, {
        method: "POST",
        headers: { authorization: `Bearer ${system.apiKey}` },
      });
      await expectError(res, 500, "internal_error");
      expect((await expectProxy(await system.api(`/proxies/${proxy.id}`))).status).toBe("available");
    });
  }
});
