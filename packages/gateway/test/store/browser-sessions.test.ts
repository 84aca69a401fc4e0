import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freshStore, STORE_KINDS } from "../../../../test/support/stores.ts";
import type { SessionRequest } from "../../src/store/browser-sessions.ts";
import type { HostDescription } from "../../src/store/hosts.ts";
import { newId } from "../../src/store/ids.ts";
import { openStore, type Store, type StoreLocation } from "../../src/store/store.ts";

const WITH_DISPLAY: HostDescription = {
  agentVersion: "1.0.0",
  display: ":1",
  screenWidth: 1024,
  screenHeight: 768,
};
const HEADLESS: HostDescription = { ...WITH_DISPLAY, display: "", screenWidth: 0, screenHeight: 0 };

function secondsAgo(seconds: number): string {
  return new Date(Date.now() - seconds * 1000).toISOString();
}

describe.each(STORE_KINDS)("browser sessions and hosts on %s", (kind) => {
  let store: Store;
  let location: StoreLocation;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ store, location, dispose } = await freshStore(kind));
    await store.organizations.ensure("acme");
    await store.organizations.ensure("globex");
  });

  afterEach(async () => {
    await dispose();
  });

  async function servingHost(address: string, description: HostDescription = WITH_DISPLAY): Promise<void> {
    await store.hosts.register(address, new Date().toISOString());
    await store.hosts.recordCheck(address, {
      health: "serving",
      detail: null,
      checkedAt: new Date().toISOString(),
      description,
    });
  }

  function request(overrides: Partial<SessionRequest> = {}): SessionRequest {
    return {
      id: newId(),
      organizationId: "acme",
      name: null,
      createdAt: new Date().toISOString(),
      timeoutSeconds: 60,
      proxyId: null,
      tags: null,
      ...overrides,
    };
  }

  /**
   * Another gateway replica's store on PostgreSQL. SQLite serves one process (its synchronous
   * driver cannot wait for a second connection in the same thread), so there it is the same store.
   */
  async function replicaStore(): Promise<{ replica: Store; close(): Promise<void> }> {
    if (kind === "sqlite") return { replica: store, close: async () => {} };
    const replica = await openStore(location);
    return { replica, close: () => replica.close() };
  }

  async function create(overrides: Partial<SessionRequest> = {}) {
    const outcome = await store.browserSessions.createOnIdleHost(request(overrides), {});
    if (!("session" in outcome)) throw new Error(`expected a session, got ${outcome.failure}`);
    return outcome.session;
  }

  /** Ends acme's session as a delete does, and confirms the stop as its agent would; false when it was not active. */
  async function endAndConfirm(id: string): Promise<boolean> {
    const ended = await store.browserSessions.end(id, new Date().toISOString(), "deleted", "acme");
    if (ended) await store.hosts.confirmStopped(ended.hostAddress, id);
    return ended !== undefined;
  }

  describe("hosts", () => {
    it("registers a host once, however often and concurrently it is registered", async () => {
      const results = await Promise.all([1, 2, 3, 4].map(() => store.hosts.register("h:1", new Date().toISOString())));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.hosts.list()).toMatchObject([{ address: "h:1", health: "unknown", sessionId: null }]);
    });

    it("stores a check's health and Describe data", async () => {
      await servingHost("h:1");
      expect(await store.hosts.find("h:1")).toMatchObject({ health: "serving", description: WITH_DISPLAY });
    });

    it("keeps a newer check when an older one finishes later", async () => {
      await store.hosts.register("h:1", new Date().toISOString());
      const newer = { health: "unreachable" as const, detail: "refused", checkedAt: secondsAgo(1) };
      const older = { health: "serving" as const, detail: null, checkedAt: secondsAgo(2), description: WITH_DISPLAY };
      expect(await store.hosts.recordCheck("h:1", newer)).toBe(true);
      expect(await store.hosts.recordCheck("h:1", older)).toBe(false);
      expect(await store.hosts.find("h:1")).toMatchObject({ health: "unreachable", healthDetail: "refused" });
    });

    it("removes an idle host, refuses one holding a session and reports an unknown one", async () => {
      await servingHost("h:1");
      await create();
      await servingHost("h:2");
      expect(await store.hosts.remove("h:1")).toBe("held");
      expect(await store.hosts.remove("h:2")).toBe("removed");
      expect(await store.hosts.remove("h:3")).toBe("absent");
      expect((await store.hosts.list()).map((h) => h.address)).toEqual(["h:1"]);
    });
  });

  describe("createOnIdleHost", () => {
    it("creates a session on an idle serving host and records the host's facts", async () => {
      await servingHost("h:1");
      const session = await create({ name: "work", tags: { team: "a" }, proxyId: "p1", timeoutSeconds: 30 });
      expect(session).toMatchObject({
        hostAddress: "h:1",
        name: "work",
        headless: false,
        viewport: { width: 1024, height: 768 },
        cdpWsUrl: null,
        agentInstance: null,
        tags: { team: "a" },
        proxyId: "p1",
        timeoutSeconds: 30,
        deletedAt: null,
      });
      expect(Date.parse(session.idleDeadline ?? "") - Date.parse(session.createdAt)).toBe(30_000);
      expect(await store.browserSessions.findActive("acme", session.id)).toEqual(session);
      expect((await store.hosts.find("h:1"))?.sessionId).toBe(session.id);
    });

    it("records a host without a display as headless, with no viewport and no CDP URL", async () => {
      await servingHost("h:1", HEADLESS);
      expect(await create()).toMatchObject({ headless: true, viewport: null, cdpWsUrl: null });
    });

    it("never places a session on a host that is not serving", async () => {
      await store.hosts.register("unknown:1", new Date().toISOString());
      await servingHost("down:1");
      await store.hosts.recordCheck("down:1", {
        health: "unreachable",
        detail: "x",
        checkedAt: new Date().toISOString(),
      });
      await servingHost("stopping:1");
      await store.hosts.recordCheck("stopping:1", {
        health: "not_serving",
        detail: "x",
        checkedAt: new Date().toISOString(),
      });
      expect(await store.browserSessions.createOnIdleHost(request(), {})).toEqual({ failure: "no_host" });
    });

    it("never places a second session on a host", async () => {
      await servingHost("h:1");
      await create();
      expect(await store.browserSessions.createOnIdleHost(request(), {})).toEqual({ failure: "no_host" });
    });

    it("refuses a name an active session of the organization has, and takes no host", async () => {
      await servingHost("h:1");
      await servingHost("h:2");
      await create({ name: "work" });
      expect(await store.browserSessions.createOnIdleHost(request({ name: "work" }), {})).toEqual({
        failure: "name_taken",
      });
      expect((await store.hosts.find("h:2"))?.sessionId).toBeNull();
      await expect(create({ name: "work", organizationId: "globex" })).resolves.toMatchObject({ name: "work" });
    });

    it("lets a deleted session's name be used again", async () => {
      await servingHost("h:1");
      const first = await create({ name: "work" });
      await endAndConfirm(first.id);
      await expect(create({ name: "work" })).resolves.toMatchObject({ name: "work", hostAddress: "h:1" });
    });

    it("takes a host without a display for headless and one with a display otherwise", async () => {
      await servingHost("a-headless:1", HEADLESS);
      await servingHost("b-display:1");
      const headful = await store.browserSessions.createOnIdleHost(request(), { headless: false });
      expect(headful).toMatchObject({ session: { hostAddress: "b-display:1" } });
      const headless = await store.browserSessions.createOnIdleHost(request(), { headless: true });
      expect(headless).toMatchObject({ session: { hostAddress: "a-headless:1" } });
    });

    it("takes only a host whose screen has the requested size", async () => {
      await servingHost("a:1");
      await servingHost("b:1", { ...WITH_DISPLAY, screenWidth: 1920, screenHeight: 1080 });
      const outcome = await store.browserSessions.createOnIdleHost(request(), {
        screen: { width: 1920, height: 1080 },
      });
      expect(outcome).toMatchObject({ session: { hostAddress: "b:1", viewport: { width: 1920, height: 1080 } } });
      expect(
        await store.browserSessions.createOnIdleHost(request(), { screen: { width: 1920, height: 1080 } }),
      ).toEqual({ failure: "no_host" });
    });

    it("gives each of many concurrent creates a different host, or none, also across replicas", async () => {
      const hosts = ["h:1", "h:2", "h:3"];
      for (const host of hosts) await servingHost(host);
      const { replica, close } = await replicaStore();
      try {
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 ? replica : store).browserSessions.createOnIdleHost(request(), {}),
          ),
        );
        const created = outcomes.flatMap((o) => ("session" in o ? [o.session.hostAddress] : []));
        expect(created.sort()).toEqual(hosts);
        expect(outcomes.filter((o) => "failure" in o && o.failure === "no_host")).toHaveLength(27);
        const held = (await store.hosts.list()).map((h) => h.sessionId);
        expect(new Set(held).size).toBe(3);
        expect(held).not.toContain(null);
      } finally {
        await close();
      }
    });
  });

  describe("createOnIdleHost with a limit on the organization's active sessions", () => {
    const LIMIT = 2;

    beforeEach(async () => {
      for (const host of ["h:1", "h:2", "h:3", "h:4", "h:5", "h:6", "h:7", "h:8"]) await servingHost(host);
    });

    function createLimited(overrides: Partial<SessionRequest> = {}, replica: Store = store) {
      return replica.browserSessions.createOnIdleHost(request(overrides), {}, LIMIT);
    }

    async function activeCount(organizationId: string): Promise<number> {
      return (await store.browserSessions.list(organizationId, { status: "active", offset: 0, limit: 100 })).items
        .length;
    }

    it("refuses a create once the organization holds the limit, takes no host for it, and counts no other organization's sessions", async () => {
      await createLimited();
      await createLimited();
      expect(await createLimited()).toEqual({ failure: "organization_limit" });
      expect((await store.hosts.list()).filter((h) => h.sessionId !== null)).toHaveLength(LIMIT);
      expect(await createLimited({ organizationId: "globex" })).toMatchObject({
        session: { organizationId: "globex" },
      });
    });

    it("counts only active sessions: ending one makes room for another", async () => {
      const first = await create();
      await create();
      expect(await createLimited()).toEqual({ failure: "organization_limit" });
      await store.browserSessions.end(first.id, new Date().toISOString(), "deleted", "acme");
      expect(await createLimited()).toMatchObject({ session: { organizationId: "acme" } });
    });

    it("still reports a name clash as such at the limit", async () => {
      await createLimited({ name: "work" });
      await createLimited();
      expect(await createLimited({ name: "work" })).toEqual({ failure: "name_taken" });
    });

    it("places as many sessions as there are hosts when the limit is 0", async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 9 }, () => store.browserSessions.createOnIdleHost(request(), {}, 0)),
      );
      expect(outcomes.filter((o) => "session" in o)).toHaveLength(8);
      expect(outcomes.filter((o) => "failure" in o)).toEqual([{ failure: "no_host" }]);
    });

    it("never lets concurrent creates exceed the limit, also across replicas, nor hold back another organization", async () => {
      const { replica, close } = await replicaStore();
      try {
        const outcomes = await Promise.all([
          ...Array.from({ length: 20 }, (_, i) => createLimited({}, i % 2 ? replica : store)),
          ...Array.from({ length: LIMIT }, (_, i) =>
            createLimited({ organizationId: "globex" }, i % 2 ? replica : store),
          ),
        ]);
        expect(outcomes.filter((o) => "session" in o)).toHaveLength(2 * LIMIT);
        expect(outcomes.filter((o) => "failure" in o && o.failure === "organization_limit")).toHaveLength(20 - LIMIT);
        expect(await activeCount("acme")).toBe(LIMIT);
        expect(await activeCount("globex")).toBe(LIMIT);
      } finally {
        await close();
      }
    });
  });

  describe("find and list", () => {
    beforeEach(async () => {
      for (const host of ["h:1", "h:2", "h:3"]) await servingHost(host);
    });

    it("finds an ended session only when asked, by id or by name", async () => {
      const session = await create({ name: "work" });
      await endAndConfirm(session.id);
      expect(await store.browserSessions.find("acme", session.id, false)).toBeUndefined();
      expect(await store.browserSessions.find("acme", session.id, true)).toMatchObject({ id: session.id });
      expect(await store.browserSessions.find("acme", "work", true)).toMatchObject({ id: session.id });
      expect(await store.browserSessions.find("globex", session.id, true)).toBeUndefined();
    });

    it("prefers the active session over an ended one with the same name", async () => {
      const ended = await create({ name: "work" });
      await endAndConfirm(ended.id);
      const active = await create({ name: "work" });
      expect((await store.browserSessions.find("acme", "work", true))?.id).toBe(active.id);
    });

    it("prefers the session whose id matches over an active one named like it", async () => {
      const target = await create({ name: "first" });
      await endAndConfirm(target.id);
      await create({ name: target.id });
      expect((await store.browserSessions.find("acme", target.id, true))?.id).toBe(target.id);
    });

    it("lists one page at a time, oldest first, and says whether more follow", async () => {
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await create({ createdAt: secondsAgo(10 - i) })).id);
      const first = await store.browserSessions.list("acme", { status: "active", offset: 0, limit: 2 });
      const second = await store.browserSessions.list("acme", { status: "active", offset: 2, limit: 2 });
      expect(first.items.map((s) => s.id)).toEqual(ids.slice(0, 2));
      expect(first.hasMore).toBe(true);
      expect(second.items.map((s) => s.id)).toEqual(ids.slice(2));
      expect(second.hasMore).toBe(false);
      expect((await store.browserSessions.list("globex", { status: "all", offset: 0, limit: 10 })).items).toEqual([]);
    });

    it("filters the list by status", async () => {
      const ended = await create();
      const active = await create();
      await endAndConfirm(ended.id);
      const ids = async (status: "active" | "deleted" | "all") =>
        (await store.browserSessions.list("acme", { status, offset: 0, limit: 10 })).items.map((s) => s.id).sort();
      expect(await ids("active")).toEqual([active.id]);
      expect(await ids("deleted")).toEqual([ended.id]);
      expect(await ids("all")).toEqual([ended.id, active.id].sort());
    });
  });

  describe("ending sessions", () => {
    beforeEach(async () => {
      for (const host of ["h:1", "h:2", "h:3"]) await servingHost(host);
    });

    it("ends a session once, with its reason, and keeps its host out of the pool until the stop is confirmed", async () => {
      const session = await create();
      const ended = await store.browserSessions.end(session.id, new Date().toISOString(), "deleted", "acme");
      expect(ended).toMatchObject({ id: session.id, endReason: "deleted" });
      expect(await store.browserSessions.end(session.id, new Date().toISOString(), "deleted", "acme")).toBeUndefined();
      expect(await store.hosts.find(session.hostAddress)).toMatchObject({
        sessionId: null,
        stoppingSessionId: session.id,
      });
      // Every other host is taken: the one being stopped is not handed out.
      await create();
      await create();
      expect(await store.browserSessions.createOnIdleHost(request(), {})).toEqual({ failure: "no_host" });
      expect(await store.hosts.confirmStopped(session.hostAddress, "another-session")).toBe(false);
      expect(await store.hosts.confirmStopped(session.hostAddress, session.id)).toBe(true);
      await expect(create()).resolves.toMatchObject({ hostAddress: session.hostAddress });
    });

    it("does not end another organization's session", async () => {
      const session = await create();
      expect(
        await store.browserSessions.end(session.id, new Date().toISOString(), "deleted", "globex"),
      ).toBeUndefined();
      expect(await store.browserSessions.findActive("acme", session.id)).toBeDefined();
    });

    it("records what the host reported when the browser started", async () => {
      const session = await create();
      const start = {
        cdpWsUrl: "ws://127.0.0.1:9/devtools/browser/x",
        headless: false,
        viewport: { width: 800, height: 600 },
        agentInstance: "run-1",
      };
      expect(await store.browserSessions.recordStart(session.id, start)).toBe(true);
      expect(await store.browserSessions.findActiveById(session.id)).toMatchObject(start);
      await endAndConfirm(session.id);
      expect(await store.browserSessions.recordStart(session.id, start)).toBe(false);
    });

    it("moves the idle deadline to the time of use plus the timeout", async () => {
      const session = await create({ createdAt: secondsAgo(50), timeoutSeconds: 60 });
      const at = new Date().toISOString();
      expect(await store.browserSessions.touch(session, at)).toBe(true);
      const touched = await store.browserSessions.findActive("acme", session.id);
      expect(touched?.lastActiveAt).toBe(at);
      expect(Date.parse(touched?.idleDeadline ?? "") - Date.parse(at)).toBe(60_000);
    });

    it("reports the use of an ended session as false", async () => {
      const session = await create();
      await endAndConfirm(session.id);
      expect(await store.browserSessions.touch(session, new Date().toISOString())).toBe(false);
    });

    it("ends only sessions past their idle deadline and frees their hosts", async () => {
      const idle = await create({ createdAt: secondsAgo(20), timeoutSeconds: 10 });
      const busy = await create({ createdAt: secondsAgo(20), timeoutSeconds: 10 });
      await store.browserSessions.touch(busy, new Date().toISOString());
      const fresh = await create({ timeoutSeconds: 10 });
      const ended = await store.browserSessions.endIdle(new Date().toISOString());
      expect(ended.map((s) => s.id)).toEqual([idle.id]);
      expect(await store.browserSessions.findActive("acme", idle.id)).toBeUndefined();
      expect(await store.browserSessions.find("acme", idle.id, true)).toMatchObject({ endReason: "idle timeout" });
      expect(await store.hosts.find(idle.hostAddress)).toMatchObject({ sessionId: null, stoppingSessionId: idle.id });
      expect(await store.browserSessions.findActive("acme", busy.id)).toBeDefined();
      expect(await store.browserSessions.findActive("acme", fresh.id)).toBeDefined();
    });

    it("ends each idle session exactly once when several callers look at the same moment", async () => {
      const idle = [await create({ createdAt: secondsAgo(20), timeoutSeconds: 10 })];
      idle.push(await create({ createdAt: secondsAgo(20), timeoutSeconds: 10 }));
      const { replica, close } = await replicaStore();
      try {
        const now = new Date().toISOString();
        const rounds = await Promise.all([store, replica, store, replica].map((s) => s.browserSessions.endIdle(now)));
        expect(
          rounds
            .flat()
            .map((s) => s.id)
            .sort(),
        ).toEqual(idle.map((s) => s.id).sort());
      } finally {
        await close();
      }
    });
  });
});
