import { randomBytes } from "node:crypto";
import { validate } from "@readme/openapi-parser";
import type { Express } from "express";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshStore } from "../../../../test/support/stores.ts";
import { CdpUrls } from "../../src/browsers/cdp/cdp-url.ts";
import { CdpTokens } from "../../src/browsers/cdp/token.ts";
import { SessionLifecycle } from "../../src/browsers/session-lifecycle.ts";
import { HostPool } from "../../src/hosts/host-pool.ts";
import { expressPath } from "../../src/http/api-router.ts";
import { createApp } from "../../src/http/app.ts";
import type { Store } from "../../src/store/store.ts";

let store: Store;
let dispose: () => Promise<void>;
let hosts: HostPool;
let app: Express;
let baseUrl: string;
let server: import("node:http").Server;
let document: { paths: Record<string, Record<string, { security: unknown[] }>> };

beforeAll(async () => {
  ({ store, dispose } = await freshStore("sqlite"));
  hosts = new HostPool(undefined);
  const logger = pino({ level: "silent" });
  app = createApp({
    store,
    hosts,
    lifecycle: new SessionLifecycle({ store, hosts, agentTimeoutMs: 1_000, logger }),
    logger,
    agentTimeoutMs: 1_000,
    maxPressDurationMs: 300_000,
    secretsKey: randomBytes(32),
    proxyCheckUrl: "http://127.0.0.1:9/",
    cdpUrls: new CdpUrls(new CdpTokens(randomBytes(32), 60), () => "ws://127.0.0.1:9"),
    maxSessionsPerOrg: 0,
    proxyChecksPerOrg: { concurrent: 4, perMinute: 60 },
    proxyAllowedNetworks: [],
    proxyUrlTemplates: {},
    metricsPublic: false,
  });
  server = await new Promise((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const address = server.address();
  baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as typeof document;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  hosts?.close();
  await dispose?.();
});

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every "METHOD /express/path" the app's routers serve. */
function servedRoutes(): string[] {
  const routes: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== "_all") routes.push(`${method.toUpperCase()} ${layer.route.path}`);
        }
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return routes.sort();
}

function documentedRoutes(): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${expressPath(path)}`))
    .sort();
}

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect((document as unknown as { openapi: string }).openapi).toBe("3.1.0");
  });

  it("carries the interface version 0.1.0 of spec part 9", () => {
    expect((document as unknown as { info: { version: string } }).info.version).toBe("0.1.0");
  });

  it("documents every route the gateway serves, and serves every documented route", () => {
    expect(documentedRoutes()).toEqual(servedRoutes());
  });

  it("names the rename operation patchProxiesById with a required name of 1 to 255 characters", () => {
    const patch = (document.paths["/proxies/{id}"] as Record<string, Record<string, unknown>>).patch as {
      operationId: string;
      requestBody: { required: boolean; content: Record<string, { schema: Record<string, unknown> }> };
    };
    expect(patch.operationId).toBe("patchProxiesById");
    expect(patch.requestBody.required).toBe(true);
    const schema = patch.requestBody.content["application/json"]?.schema as {
      required: string[];
      properties: { name: { maxLength?: number } };
    };
    expect(schema.required).toEqual(["name"]);
  });

  it("requires bearer authentication on every operation but the operational ones", () => {
    const open = ["/healthz", "/readyz", "/metrics", "/openapi.json"];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const operation of Object.values(methods)) {
        expect(operation.security, path).toEqual(open.includes(path) ? [] : [{ bearerAuth: [] }]);
      }
    }
  });
});
