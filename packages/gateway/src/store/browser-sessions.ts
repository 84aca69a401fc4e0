import type { SqlClient } from "./sql-client.ts";

export interface BrowserSessionRecord {
  id: string;
  organizationId: string;
  name: string | null;
  /** gRPC address (host:port) of the host agent the session runs on. */
  hostAddress: string;
  createdAt: string;
  deletedAt: string | null;
}

interface Row {
  id: string;
  organization_id: string;
  name: string | null;
  host_address: string;
  created_at: string;
  deleted_at: string | null;
}

const COLUMNS = "id, organization_id, name, host_address, created_at, deleted_at";

function fromRow(row: Row): BrowserSessionRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    hostAddress: row.host_address,
    createdAt: row.created_at,
    deletedAt: row.deleted_at,
  };
}

export class BrowserSessionRepository {
  readonly #sql: SqlClient;

  constructor(sql: SqlClient) {
    this.#sql = sql;
  }

  /** Throws UniqueViolationError when the organization has an active session with this name. */
  async insert(record: Omit<BrowserSessionRecord, "deletedAt">): Promise<void> {
    await this.#sql.execute(`INSERT INTO browser_sessions (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, NULL)`, [
      record.id,
      record.organizationId,
      record.name,
      record.hostAddress,
      record.createdAt,
    ]);
  }

  /**
   * The organization's active session with this id, else with this name.
   * An id always wins, so a session named like another's id stays reachable by id.
   */
  async findActive(organizationId: string, idOrName: string): Promise<BrowserSessionRecord | undefined> {
    const rows = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM browser_sessions
        WHERE organization_id = $1 AND deleted_at IS NULL AND (id = $2 OR name = $2)`,
      [organizationId, idOrName],
    );
    const row = rows.find((r) => r.id === idOrName) ?? rows[0];
    return row && fromRow(row);
  }

  async markDeleted(organizationId: string, id: string, at: string): Promise<boolean> {
    return (
      (await this.#sql.execute(
        "UPDATE browser_sessions SET deleted_at = $3 WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL",
        [organizationId, id, at],
      )) > 0
    );
  }
}
