import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { newId } from "../../packages/gateway/src/store/ids.ts";
import { type AgentProcess, startAgent } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";

let system: System;
const extraAgents: AgentProcess[] = [];
/** Sessions a test created; each is deleted after the test so the next one finds the hosts idle. */
let created: string[] = [];

beforeAll(async () => {
  system = await startSystem({ store: "sqlite" });
  // With the system's own agent held by its `local` session, these two are the free hosts.
  extraAgents.push(...(await Promise.all([startAgent(), startAgent()])));
  for (const agent of extraAgents) await system.addHost(agent.address);
});

afterEach(async () => {
  for (const id of created) await system.api(`/browsers/${id}`, { method: "DELETE" });
  created = [];
});

afterAll(async () => {
  await Promise.allSettled(extraAgents.map((agent) => agent.stop()));
  await system?.stop();
});

function post(body: unknown, apiKey?: string): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return system.api("/browsers", { method: "POST", headers, body: JSON.stringify(body) });
}

async function createSession(body: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const res = await post(body);
  expect(res.status, await res.clone().text()).toBe(200);
  const session = (await res.json()) as Record<string, unknown>;
  created.push(session.session_id as string);
  return session;
}

async function expectError(res: Response, status: number, code: string): Promise<Record<string, unknown>> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.code).toBe(code);
  return body;
}

async function insertProxy(organizationId: string, name: string): Promise<string> {
  const id = newId();
  await system.store.organizations.ensure(organizationId);
  await system.store.proxies.insert({
    id,
    organizationId,
    name,
    // A custom proxy: a session can be routed through it (a managed type needs a URL template). Its
    // address is never dialled here: no page is loaded.
    type: "custom",
    protocol: "http",
    status: null,
    ipAddress: null,
    lastChecked: null,
    bypassHosts: [],
    config: { host: "proxy.example", port: 3128 },
    passwordSealed: null,
    caBundleSealed: null,
    createdAt: new Date().toISOString(),
  });
  return id;
}

describe("POST /browsers", () => {
  it("creates a session on an idle host and returns its record", async () => {
    const session = await createSession({ name: "work", tags: { team: "qa" }, timeout_seconds: 120 });
    expect(session).toEqual({
      session_id: expect.stringMatching(/^[a-z0-9]{24}$/),
      name: "work",
      created_at: expect.any(String),
      cdp_ws_url: "",
      webdriver_ws_url: "",
      headless: true,
      stealth: false,
      timeout_seconds: 120,
      tags: { team: "qa" },
    });
    const host = (await system.store.hosts.list()).find((h) => h.sessionId === session.session_id);
    expect(extraAgents.map((a) => a.address)).toContain(host?.address);
  });

  it("creates a session from a request without a body, as the SDK sends create() without params", async () => {
    const res = await system.api("/browsers", { method: "POST" });
    expect(res.status).toBe(200);
    created.push(((await res.json()) as { session_id: string }).session_id);
  });

  it("defaults the idle timeout to 60 seconds", async () => {
    expect(await createSession()).toMatchObject({ timeout_seconds: 60 });
  });

  it("answers 409 conflict when an active session of the organization has the name", async () => {
    await expectError(await post({ name: system.session.name }), 409, "conflict");
  });

  it("allows a name another organization's active session has", async () => {
    const { key } = await createApiKey(system.store, `org-${newId(8)}`, "other");
    const res = await post({ name: system.session.name }, key);
    expect(res.status).toBe(200);
    const session = (await res.json()) as { session_id: string };
    await system.api(`/browsers/${session.session_id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${key}` },
    });
  });

  it("lets a session be named like another session's id, and that id still resolves to the other", async () => {
    const namesake = await createSession({ name: system.session.id });
    const byId = (await (await system.api(`/browsers/${system.session.id}`)).json()) as Record<string, unknown>;
    expect(byId).toMatchObject({ session_id: system.session.id, name: system.session.name });
    const own = (await (await system.api(`/browsers/${namesake.session_id}`)).json()) as Record<string, unknown>;
    expect(own).toMatchObject({ session_id: namesake.session_id, name: system.session.id });
  });

  it("lets a deleted session's name be used again", async () => {
    const first = await createSession({ name: "reused" });
    expect((await system.api(`/browsers/${first.session_id}`, { method: "DELETE" })).status).toBe(204);
    const second = await createSession({ name: "reused" });
    expect(second.session_id).not.toBe(first.session_id);
  });

  it("answers 503 no_host_available with x-should-retry true when every host is busy", async () => {
    await createSession();
    await createSession();
    const res = await post({});
    expect(res.headers.get("x-should-retry")).toBe("true");
    await expectError(res, 503, "no_host_available");
  });

  it("answers 503 when no idle host has the requested display", async () => {
    await expectError(await post({ headless: false }), 503, "no_host_available");
  });

  it("refuses what a self-hosted host cannot honour with 400, naming each field", async () => {
    const res = await post({ stealth: true, profile: { name: "p" }, start_url: "https://example.com" });
    const body = await expectError(res, 400, "bad_request");
    expect((body.details as { message: string }[]).map((d) => d.message.split(":")[0]).sort()).toEqual([
      "profile",
      "start_url",
      "stealth",
    ]);
  });

  it("accepts stealth, gpu and kiosk_mode when they are false", async () => {
    expect(await createSession({ stealth: false, gpu: false, kiosk_mode: false })).toMatchObject({ stealth: false });
  });

  it("refuses unknown fields with 400", async () => {
    const body = await expectError(await post({ colour: "blue" }), 400, "bad_request");
    expect(body.details).toEqual([{ code: "invalid_input", message: "colour: unknown field" }]);
  });

  it("accepts timeout_seconds from 10 to 259200 and refuses values outside", async () => {
    await expectError(await post({ timeout_seconds: 9 }), 400, "bad_request");
    await expectError(await post({ timeout_seconds: 259_201 }), 400, "bad_request");
    await expectError(await post({ timeout_seconds: 10.5 }), 400, "bad_request");
    expect(await createSession({ timeout_seconds: 10 })).toMatchObject({ timeout_seconds: 10 });
    expect(await createSession({ timeout_seconds: 259_200 })).toMatchObject({ timeout_seconds: 259_200 });
  });

  it("refuses an empty name and one longer than 255 characters", async () => {
    await expectError(await post({ name: "" }), 400, "bad_request");
    await expectError(await post({ name: "n".repeat(256) }), 400, "bad_request");
  });

  it("records a proxy given by id", async () => {
    const proxyId = await insertProxy(system.organizationId, "by-id");
    expect(await createSession({ proxy_id: proxyId })).toMatchObject({ proxy_id: proxyId });
  });

  it("resolves a proxy_id that is the name of exactly one proxy to that proxy's id", async () => {
    const proxyId = await insertProxy(system.organizationId, "only-one");
    expect(await createSession({ proxy_id: "only-one" })).toMatchObject({ proxy_id: proxyId });
  });

  it("answers 400 listing the ids of every proxy a name matches", async () => {
    const ids = [
      await insertProxy(system.organizationId, "shared"),
      await insertProxy(system.organizationId, "shared"),
    ];
    const body = await expectError(await post({ proxy_id: "shared" }), 400, "bad_request");
    const details = body.details as { code: string; message: string }[];
    expect(details).toHaveLength(2);
    for (const id of ids) expect(details.some((d) => d.code === "invalid_input" && d.message.includes(id))).toBe(true);
  });

  it("answers 400 for a proxy_id that is no proxy of the organization", async () => {
    const foreign = await insertProxy(`org-${newId(8)}`, "foreign");
    for (const reference of [foreign, "no-such-proxy"]) {
      const body = await expectError(await post({ proxy_id: reference }), 400, "bad_request");
      expect(body.details).toEqual([{ code: "invalid_input", message: expect.stringMatching(/^proxy_id: /) }]);
    }
  });
});

describe("GET /browsers", () => {
  it("pages through the organization's sessions with X-Has-More and X-Next-Offset", async () => {
    const a = await createSession();
    const b = await createSession();
    const first = await system.api("/browsers?limit=2");
    expect(first.headers.get("x-has-more")).toBe("true");
    expect(first.headers.get("x-next-offset")).toBe("2");
    const second = await system.api("/browsers?limit=2&offset=2");
    expect(second.headers.get("x-has-more")).toBe("false");
    expect(second.headers.get("x-next-offset")).toBe("0");
    const ids = [
      ...((await first.json()) as { session_id: string }[]),
      ...((await second.json()) as { session_id: string }[]),
    ].map((s) => s.session_id);
    expect(ids).toEqual([system.session.id, a.session_id, b.session_id]);
  });

  it("lists ended sessions only with status=deleted or all", async () => {
    const ended = await createSession();
    await system.api(`/browsers/${ended.session_id}`, { method: "DELETE" });
    const ids = async (query: string) =>
      ((await (await system.api(`/browsers${query}`)).json()) as { session_id: string }[]).map((s) => s.session_id);
    expect(await ids("")).not.toContain(ended.session_id);
    expect(await ids("?status=deleted")).toContain(ended.session_id);
    expect(await ids("?status=all")).toEqual(expect.arrayContaining([ended.session_id, system.session.id]));
    expect(await ids("?include_deleted=true")).toContain(ended.session_id);
  });

  it("never lists another organization's sessions", async () => {
    const { key } = await createApiKey(system.store, `org-${newId(8)}`, "other");
    const res = await system.api("/browsers", { headers: { authorization: `Bearer ${key}` } });
    expect(await res.json()).toEqual([]);
  });

  it("refuses a limit outside 1 to 100 with 400", async () => {
    await expectError(await system.api("/browsers?limit=0"), 400, "bad_request");
    await expectError(await system.api("/browsers?limit=101"), 400, "bad_request");
  });
});

describe("GET /browsers/{id_or_name}", () => {
  it("returns the session by id and by name", async () => {
    for (const idOrName of [system.session.id, system.session.name]) {
      const res = await system.api(`/browsers/${idOrName}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ session_id: system.session.id, name: "local" });
    }
  });

  it("answers 404 for another organization's session", async () => {
    const { key } = await createApiKey(system.store, `org-${newId(8)}`, "other");
    const res = await system.api(`/browsers/${system.session.id}`, { headers: { authorization: `Bearer ${key}` } });
    await expectError(res, 404, "not_found");
  });

  it("finds an ended session only with include_deleted=true, with its deleted_at", async () => {
    const ended = await createSession();
    await system.api(`/browsers/${ended.session_id}`, { method: "DELETE" });
    await expectError(await system.api(`/browsers/${ended.session_id}`), 404, "not_found");
    const res = await system.api(`/browsers/${ended.session_id}?include_deleted=true`);
    expect(await res.json()).toMatchObject({ session_id: ended.session_id, deleted_at: expect.any(String) });
  });
});

describe("DELETE /browsers/{id_or_name}", () => {
  it("answers 204 and frees the session's host", async () => {
    const session = await createSession({ name: "to-delete" });
    const host = (await system.store.hosts.list()).find((h) => h.sessionId === session.session_id);
    expect((await system.api("/browsers/to-delete", { method: "DELETE" })).status).toBe(204);
    expect((await system.store.hosts.find(host?.address ?? ""))?.sessionId).toBeNull();
  });

  it("makes press_key and file_info on the deleted session answer 404", async () => {
    const session = await createSession();
    await system.api(`/browsers/${session.session_id}`, { method: "DELETE" });
    await expectError(await system.api(`/browsers/${session.session_id}/fs/file_info?path=/`), 404, "not_found");
    const press = await system.api(`/browsers/${session.session_id}/computer/press_key`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ keys: ["a"] }),
    });
    await expectError(press, 404, "not_found");
  });

  it("answers 404 for a session that is already deleted", async () => {
    const session = await createSession();
    await system.api(`/browsers/${session.session_id}`, { method: "DELETE" });
    await expectError(await system.api(`/browsers/${session.session_id}`, { method: "DELETE" }), 404, "not_found");
  });
});
