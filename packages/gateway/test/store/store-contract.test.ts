import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freshStore, freshStoreLocation, openStoreInProcess, STORE_KINDS } from "../../../../test/support/stores.ts";
import { createApiKey, hashApiKey } from "../../src/auth/api-keys.ts";
import { newId } from "../../src/store/ids.ts";
import { MIGRATIONS, migrate } from "../../src/store/migrations.ts";
import { PostgresListener } from "../../src/store/postgres-listener.ts";
import { UniqueViolationError } from "../../src/store/sql-client.ts";
import { openStore, type Store, type StoreLocation } from "../../src/store/store.ts";

/** Polls until `read` returns something; PostgreSQL hears of changes asynchronously. */
async function waitFor<T>(what: string, read: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.each(STORE_KINDS)("store contract on %s", (kind) => {
  let store: Store;
  let location: StoreLocation;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ store, location, dispose } = await freshStore(kind));
  });

  afterEach(async () => {
    await dispose();
  });

  function session(organizationId: string, name: string | null, id = newId()) {
    return { id, organizationId, name, hostAddress: "127.0.0.1:50051", createdAt: new Date().toISOString() };
  }

  describe("migrations", () => {
    it("applies every migration once and records it", async () => {
      const rows = await store.sql.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
      expect(rows.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version));
    });

    it("does nothing when run again", async () => {
      expect(await migrate(store.sql)).toEqual([]);
    });

    it("is safe when several replicas start on an empty database at the same moment", async () => {
      const empty = await freshStoreLocation(kind);
      try {
        await Promise.all([1, 2, 3].map(() => openStoreInProcess(empty.location)));
        const opened = await openStore(empty.location);
        const rows = await opened.sql.query("SELECT version FROM schema_migrations");
        await opened.close();
        expect(rows).toHaveLength(MIGRATIONS.length);
      } finally {
        empty.cleanup();
      }
    });
  });

  describe("organizations", () => {
    it("ensure creates an organization once and returns it every time", async () => {
      const first = await store.organizations.ensure("acme");
      const second = await store.organizations.ensure("acme");
      expect(second).toEqual(first);
    });
  });

  describe("api keys", () => {
    it("stores only the hash of a key and finds the key by it", async () => {
      const { key, record } = await createApiKey(store, "acme", "ci");
      const rows = await store.sql.query<Record<string, unknown>>("SELECT * FROM api_keys");
      expect(JSON.stringify(rows)).not.toContain(key);
      expect((await store.apiKeys.findActiveByHash(hashApiKey(key)))?.id).toBe(record.id);
    });

    it("no longer finds a revoked key", async () => {
      const { key, record } = await createApiKey(store, "acme", "ci");
      expect(await store.apiKeys.revoke(record.id, new Date().toISOString())).toBe(true);
      expect(await store.apiKeys.findActiveByHash(hashApiKey(key))).toBeUndefined();
    });

    it("reports revoking an unknown or already revoked key as false", async () => {
      const { record } = await createApiKey(store, "acme", "ci");
      await store.apiKeys.revoke(record.id, new Date().toISOString());
      expect(await store.apiKeys.revoke(record.id, new Date().toISOString())).toBe(false);
      expect(await store.apiKeys.revoke("nope", new Date().toISOString())).toBe(false);
    });

    describe("revocation version", () => {
      const watching = () => waitFor("revocations are watched", () => store.apiKeys.revocationVersion());

      it("stays the same while nothing is revoked", async () => {
        const before = await watching();
        await createApiKey(store, "acme", "ci");
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(store.apiKeys.revocationVersion()).toBe(before);
      });

      it("changes at once when this process revokes a key", async () => {
        const { record } = await createApiKey(store, "acme", "ci");
        const before = await watching();
        await store.apiKeys.revoke(record.id, new Date().toISOString());
        expect(store.apiKeys.revocationVersion()).not.toBe(before);
      });

      it("changes when another connection (the admin CLI, another replica) revokes a key", async () => {
        const { record } = await createApiKey(store, "acme", "ci");
        const before = await watching();
        const other = await openStore(location);
        try {
          await other.apiKeys.revoke(record.id, new Date().toISOString());
        } finally {
          await other.close();
        }
        await waitFor("the version changes", () => {
          const now = store.apiKeys.revocationVersion();
          return now !== undefined && now !== before ? now : undefined;
        });
      });
    });

    it("lists keys of one organization or of all", async () => {
      await createApiKey(store, "acme", "a");
      await createApiKey(store, "globex", "b");
      expect((await store.apiKeys.list("acme")).map((k) => k.name)).toEqual(["a"]);
      expect(await store.apiKeys.list()).toHaveLength(2);
    });
  });

  describe("browser sessions", () => {
    beforeEach(async () => {
      await store.organizations.ensure("acme");
      await store.organizations.ensure("globex");
    });

    it("finds an active session by id and by name", async () => {
      const s = session("acme", "work");
      await store.browserSessions.insert(s);
      expect((await store.browserSessions.findActive("acme", s.id))?.id).toBe(s.id);
      expect((await store.browserSessions.findActive("acme", "work"))?.id).toBe(s.id);
    });

    it("never finds another organization's session", async () => {
      const s = session("acme", "work");
      await store.browserSessions.insert(s);
      expect(await store.browserSessions.findActive("globex", s.id)).toBeUndefined();
      expect(await store.browserSessions.findActive("globex", "work")).toBeUndefined();
    });

    it("prefers the session whose id matches over one whose name matches", async () => {
      const target = session("acme", "first");
      await store.browserSessions.insert(target);
      await store.browserSessions.insert(session("acme", target.id));
      expect((await store.browserSessions.findActive("acme", target.id))?.id).toBe(target.id);
    });

    it("refuses a second active session with the same name in one organization", async () => {
      await store.browserSessions.insert(session("acme", "work"));
      await expect(store.browserSessions.insert(session("acme", "work"))).rejects.toBeInstanceOf(UniqueViolationError);
    });

    it("allows the same name in two organizations", async () => {
      await store.browserSessions.insert(session("acme", "work"));
      await expect(store.browserSessions.insert(session("globex", "work"))).resolves.toBeUndefined();
    });

    it("forgets a deleted session and frees its name", async () => {
      const s = session("acme", "work");
      await store.browserSessions.insert(s);
      expect(await store.browserSessions.end(s.id, new Date().toISOString(), "deleted", "acme")).toBeDefined();
      expect(await store.browserSessions.findActive("acme", s.id)).toBeUndefined();
      await expect(store.browserSessions.insert(session("acme", "work"))).resolves.toBeUndefined();
    });
  });

  describe("transactions", () => {
    it("roll back every write when the function throws", async () => {
      await store.organizations.ensure("acme");
      await expect(
        store.sql.transaction(async (tx) => {
          await tx.execute("INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)", ["tx", "tx", "now"]);
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await store.sql.query("SELECT id FROM organizations WHERE id = 'tx'")).toEqual([]);
    });

    it("keep concurrent transactions from interleaving", async () => {
      await store.sql.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)");
      await store.sql.execute("INSERT INTO counter (id, value) VALUES (1, 0)");
      const lock = kind === "postgres" ? " FOR UPDATE" : "";
      await Promise.all(
        Array.from({ length: 20 }, () =>
          store.sql.transaction(async (tx) => {
            const [row] = await tx.query<{ value: number }>(`SELECT value FROM counter WHERE id = 1${lock}`);
            await new Promise((resolve) => setTimeout(resolve, 1));
            await tx.execute("UPDATE counter SET value = $1 WHERE id = 1", [Number(row?.value) + 1]);
          }),
        ),
      );
      const [row] = await store.sql.query<{ value: number }>("SELECT value FROM counter WHERE id = 1");
      expect(Number(row?.value)).toBe(20);
    });
  });
});

describe("revocations on PostgreSQL", () => {
  let store: Store;
  let location: StoreLocation;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    ({ store, location, dispose } = await freshStore("postgres"));
  });

  afterEach(async () => {
    await dispose();
  });

  it("are unknown while the notification connection is down, and the version changes once it is back", async () => {
    const watching = () => waitFor("revocations are watched", () => store.apiKeys.revocationVersion());
    const before = await watching();
    await store.sql.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'",
    );
    await waitFor("the lost connection is noticed", () =>
      store.apiKeys.revocationVersion() === undefined ? true : undefined,
    );
    expect(await watching()).not.toBe(before);
  });

  it("are still heard, and the version stays the same, while the listener's heartbeats come and go", async () => {
    const listener = new PostgresListener(
      (location as { databaseUrl: string }).databaseUrl,
      "api_key_revocations",
      2_000,
      20,
    );
    try {
      const before = await waitFor("the listener listens", () => listener.version());
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(listener.version()).toBe(before);
      const { record } = await createApiKey(store, "acme", "ci");
      await store.apiKeys.revoke(record.id, new Date().toISOString());
      await waitFor("the revocation is heard", () => (listener.version() !== before ? true : undefined));
    } finally {
      await listener.close();
    }
  });
});
