import { join } from "node:path";
import { ApiKeyRepository } from "./api-keys.ts";
import { BrowserSessionRepository } from "./browser-sessions.ts";
import { HostRepository } from "./hosts.ts";
import { migrate } from "./migrations.ts";
import { OrganizationRepository } from "./organizations.ts";
import { PostgresClient } from "./postgres-client.ts";
import { ProxyRepository } from "./proxies.ts";
import type { SqlClient } from "./sql-client.ts";
import { SqliteClient } from "./sqlite-client.ts";

/** Everything the gateway keeps, behind one object; one implementation for both engines. */
export interface Store {
  readonly sql: SqlClient;
  readonly organizations: OrganizationRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly browserSessions: BrowserSessionRepository;
  readonly hosts: HostRepository;
  readonly proxies: ProxyRepository;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type StoreLocation = { databaseUrl: string } | { sqlitePath: string };

export function sqlitePathIn(dataDir: string): string {
  return join(dataDir, "gateway.db");
}

export function storeOver(sql: SqlClient): Store {
  return {
    sql,
    organizations: new OrganizationRepository(sql),
    apiKeys: new ApiKeyRepository(sql),
    browserSessions: new BrowserSessionRepository(sql),
    hosts: new HostRepository(sql),
    proxies: new ProxyRepository(sql),
    ping: async () => {
      await sql.query("SELECT 1");
    },
    close: () => sql.close(),
  };
}

/** Opens the database and applies pending migrations. */
export async function openStore(location: StoreLocation): Promise<Store> {
  const sql =
    "databaseUrl" in location
      ? new PostgresClient({ connectionString: location.databaseUrl })
      : new SqliteClient(location.sqlitePath);
  try {
    await migrate(sql);
  } catch (error) {
    await sql.close().catch(() => {});
    throw error;
  }
  return storeOver(sql);
}
