import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type System, startSystem } from "../support/system.ts";

let system: System;

beforeAll(async () => {
  system = await startSystem({ store: "sqlite" });
});

afterAll(async () => {
  await system?.stop();
});

function fileInfoWith(authorization: string | undefined): Promise<Response> {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  return fetch(`${system.gateway.url}/browsers/${system.session.name}/fs/file_info?path=/`, { headers });
}

async function expectUnauthorized(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  const body = (await res.json()) as { code: string; message: string };
  expect(body.code).toBe("unauthorized");
  expect(body.message).toEqual(expect.any(String));
}

describe("bearer authentication", () => {
  it("accepts a valid key", async () => {
    expect((await fileInfoWith(`Bearer ${system.apiKey}`)).status).toBe(200);
  });

  it("refuses a request without a token", async () => {
    await expectUnauthorized(await fileInfoWith(undefined));
  });

  it("refuses a wrong token", async () => {
    await expectUnauthorized(await fileInfoWith(`Bearer ${system.apiKey}x`));
  });

  it("refuses Bearer with nothing after it", async () => {
    await expectUnauthorized(await fileInfoWith("Bearer "));
  });

  it("refuses another scheme", async () => {
    await expectUnauthorized(await fileInfoWith(`Basic ${Buffer.from(`user:${system.apiKey}`).toString("base64")}`));
  });

  it("refuses the key without a scheme", async () => {
    await expectUnauthorized(await fileInfoWith(system.apiKey));
  });

  it("refuses a revoked key at once", async () => {
    const { createApiKey } = await import("../../packages/gateway/src/auth/api-keys.ts");
    const { key, record } = await createApiKey(system.store, system.organizationId, "to-revoke");
    expect((await fileInfoWith(`Bearer ${key}`)).status).toBe(200);
    await system.store.apiKeys.revoke(record.id, new Date().toISOString());
    await expectUnauthorized(await fileInfoWith(`Bearer ${key}`));
  });

  it("refuses an unknown route without a key with 401, not 404", async () => {
    const res = await fetch(`${system.gateway.url}/no/such/route`);
    await expectUnauthorized(res);
  });

  it("leaves health and readiness open", async () => {
    expect((await fetch(`${system.gateway.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${system.gateway.url}/readyz`)).status).toBe(200);
  });
});

describe("HTTP error contract", () => {
  it("answers an unknown route with 404 not_found", async () => {
    const res = await system.api("/no/such/route");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "not_found" });
  });

  it("answers a body that is not JSON with 400 invalid_request and only code and message", async () => {
    const res = await system.api("/browsers/local/computer/press_key", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toEqual({ code: "invalid_request", message: expect.any(String) });
  });

  it("answers a body of another content type with 400 invalid_request", async () => {
    const res = await system.api("/browsers/local/computer/press_key", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "keys=a",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: "invalid_request", message: expect.any(String) });
  });

  it("answers a body over 1 MiB with 413 payload_too_large", async () => {
    const res = await system.api("/browsers/local/computer/press_key", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ keys: ["a"], pad: "x".repeat(1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: "payload_too_large" });
  });

  it("echoes a request id and carries it to the host agent's log", async () => {
    const requestId = `trace-${Date.now()}`;
    const res = await system.api(`/browsers/${system.session.name}/fs/file_info?path=/`, {
      headers: { "x-request-id": requestId },
    });
    expect(res.headers.get("x-request-id")).toBe(requestId);
    await system.agent.waitForLog((line) => line.reqId === requestId && line.method === "FileInfo");
  });

  it("never writes the API key to the gateway's log", async () => {
    await system.api(`/browsers/${system.session.name}/fs/file_info?path=/`);
    expect((await system.gateway.settledLines()).join("\n")).not.toContain(system.apiKey);
  });
});
