import type { ChangeWatch, SqlClient } from "./sql-client.ts";

/** The channel revocations are announced on (PostgreSQL NOTIFY), for caches of active keys. */
const REVOCATIONS = "api_key_revocations";

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  /** SHA-256 of the key, hex; the key itself is never stored. */
  keyHash: string;
  /** The first characters of the key, so an operator can tell keys apart. */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

interface Row {
  id: string;
  organization_id: string;
  name: string;
  key_hash: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

const COLUMNS = "id, organization_id, name, key_hash, prefix, created_at, revoked_at";

function fromRow(row: Row): ApiKeyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    keyHash: row.key_hash,
    prefix: row.prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export class ApiKeyRepository {
  readonly #sql: SqlClient;
  #revocations: ChangeWatch | undefined;

  constructor(sql: SqlClient) {
    this.#sql = sql;
  }

  /**
   * Differs from its previous value whenever a key may have been revoked since, by this process or
   * any other; undefined when that cannot be known. A cache of active keys is valid for one value.
   */
  revocationVersion(): number | undefined {
    // Watching starts with the first caller: the admin CLI and migrations never need it (on
    // PostgreSQL it holds a connection).
    this.#revocations ??= this.#sql.watch?.(REVOCATIONS);
    return this.#revocations?.version();
  }

  async insert(record: Omit<ApiKeyRecord, "revokedAt">): Promise<void> {
    await this.#sql.execute(`INSERT INTO api_keys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, NULL)`, [
      record.id,
      record.organizationId,
      record.name,
      record.keyHash,
      record.prefix,
      record.createdAt,
    ]);
  }

  /** The active (not revoked) key with this hash. */
  async findActiveByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
      [keyHash],
    );
    return row && fromRow(row);
  }

  async list(organizationId?: string): Promise<ApiKeyRecord[]> {
    const rows = organizationId
      ? await this.#sql.query<Row>(
          `SELECT ${COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id`,
          [organizationId],
        )
      : await this.#sql.query<Row>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`);
    return rows.map(fromRow);
  }

  /** Marks the key revoked; false when no active key has this id. */
  async revoke(id: string, at: string): Promise<boolean> {
    const update = "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL";
    // On PostgreSQL the notification commits with the update, so no replica hears of a revocation
    // that did not happen, nor misses one that did while it was listening.
    const revoked =
      this.#sql.dialect === "postgres"
        ? (
            await this.#sql.query(`WITH r AS (${update} RETURNING id) SELECT pg_notify('${REVOCATIONS}', id) FROM r`, [
              id,
              at,
            ])
          ).length
        : await this.#sql.execute(update, [id, at]);
    if (revoked > 0) this.#revocations?.touch();
    return revoked > 0;
  }
}
