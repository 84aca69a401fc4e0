import type { SqlClient } from "./sql-client.ts";

export interface Organization {
  id: string;
  name: string;
  createdAt: string;
}

export class OrganizationRepository {
  readonly #sql: SqlClient;

  constructor(sql: SqlClient) {
    this.#sql = sql;
  }

  /** Creates the organization unless it exists; returns it either way. */
  async ensure(id: string, name = id): Promise<Organization> {
    await this.#sql.execute(
      "INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
      [id, name, new Date().toISOString()],
    );
    const [row] = await this.#sql.query<{ id: string; name: string; created_at: string }>(
      "SELECT id, name, created_at FROM organizations WHERE id = $1",
      [id],
    );
    if (!row) throw new Error(`organization ${id} vanished`);
    return { id: row.id, name: row.name, createdAt: row.created_at };
  }
}
