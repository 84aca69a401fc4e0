import type { SqlClient } from "./sql-client.ts";

export const PROXY_TYPES = ["datacenter", "isp", "residential", "mobile", "custom"] as const;
export type ProxyType = (typeof PROXY_TYPES)[number];
export const PROXY_PROTOCOLS = ["http", "https"] as const;
export type ProxyProtocol = (typeof PROXY_PROTOCOLS)[number];
export const PROXY_STATUSES = ["available", "unavailable"] as const;
export type ProxyStatus = (typeof PROXY_STATUSES)[number];

export interface ProxyRecord {
  id: string;
  organizationId: string;
  name: string;
  type: ProxyType;
  protocol: ProxyProtocol;
  /** Null until the first health check. */
  status: ProxyStatus | null;
  ipAddress: string | null;
  lastChecked: string | null;
  bypassHosts: string[];
  /** The public part of the configuration; for a custom proxy its `host` is also searchable. */
  config: Record<string, unknown>;
  /** Sealed secrets of a custom proxy (see proxies/secret-box.ts); the store never sees them in clear. */
  passwordSealed: string | null;
  caBundleSealed: string | null;
  createdAt: string;
  deletedAt: string | null;
}

export interface ProxyListFilter {
  /** Exact name, case-insensitively. */
  name?: string;
  /** Case-insensitive substring of name, host or IP address, or an exact id. */
  query?: string;
  offset: number;
  limit: number;
}

/** What one health check learned; a missing status or ipAddress leaves the stored one as it is. */
export interface ProxyCheckResult {
  status?: ProxyStatus;
  ipAddress?: string;
  checkedAt: string;
}

interface Row {
  id: string;
  organization_id: string;
  name: string;
  type: ProxyType;
  protocol: ProxyProtocol;
  status: ProxyStatus | null;
  ip_address: string | null;
  last_checked: string | null;
  bypass_hosts: string;
  config: string;
  password_sealed: string | null;
  ca_bundle_sealed: string | null;
  created_at: string;
  deleted_at: string | null;
}

const COLUMNS =
  "id, organization_id, name, type, protocol, status, ip_address, last_checked, bypass_hosts, config, password_sealed, ca_bundle_sealed, created_at, deleted_at";

function fromRow(row: Row): ProxyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    type: row.type,
    protocol: row.protocol,
    status: row.status,
    ipAddress: row.ip_address,
    lastChecked: row.last_checked,
    bypassHosts: JSON.parse(row.bypass_hosts) as string[],
    config: JSON.parse(row.config) as Record<string, unknown>,
    passwordSealed: row.password_sealed,
    caBundleSealed: row.ca_bundle_sealed,
    createdAt: row.created_at,
    deletedAt: row.deleted_at,
  };
}

// Folding in JavaScript rather than with SQL LOWER() makes both engines agree beyond ASCII.
function fold(text: string): string {
  return text.toLowerCase();
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class ProxyRepository {
  readonly #sql: SqlClient;

  constructor(sql: SqlClient) {
    this.#sql = sql;
  }

  async insert(record: Omit<ProxyRecord, "deletedAt">): Promise<void> {
    const host = typeof record.config.host === "string" ? record.config.host : null;
    await this.#sql.execute(
      `INSERT INTO proxies (${COLUMNS}, name_folded, host)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, NULL, $14, $15)`,
      [
        record.id,
        record.organizationId,
        record.name,
        record.type,
        record.protocol,
        record.status,
        record.ipAddress,
        record.lastChecked,
        JSON.stringify(record.bypassHosts),
        JSON.stringify(record.config),
        record.passwordSealed,
        record.caBundleSealed,
        record.createdAt,
        fold(record.name),
        host,
      ],
    );
  }

  /** The organization's proxy with this id, unless it was deleted. */
  async findActive(organizationId: string, id: string): Promise<ProxyRecord | undefined> {
    const [row] = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM proxies WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [organizationId, id],
    );
    return row && fromRow(row);
  }

  /** One page of the organization's active proxies, oldest first. */
  async list(organizationId: string, filter: ProxyListFilter): Promise<{ items: ProxyRecord[]; hasMore: boolean }> {
    const conditions = ["organization_id = $1", "deleted_at IS NULL"];
    const params: unknown[] = [organizationId];
    if (filter.name !== undefined) {
      params.push(fold(filter.name));
      conditions.push(`name_folded = $${params.length}`);
    }
    if (filter.query !== undefined) {
      params.push(filter.query, likePattern(fold(filter.query)));
      const exact = `$${params.length - 1}`;
      const like = `$${params.length}`;
      conditions.push(
        `(id = ${exact} OR name_folded LIKE ${like} ESCAPE '\\' OR LOWER(host) LIKE ${like} ESCAPE '\\'` +
          ` OR LOWER(ip_address) LIKE ${like} ESCAPE '\\')`,
      );
    }
    // One row beyond the page tells whether another page follows.
    params.push(filter.limit + 1, filter.offset);
    const rows = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM proxies WHERE ${conditions.join(" AND ")}
        ORDER BY created_at, id LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return { items: rows.slice(0, filter.limit).map(fromRow), hasMore: rows.length > filter.limit };
  }

  /** Sets the name and nothing else; undefined when the organization has no such active proxy. */
  async rename(organizationId: string, id: string, name: string): Promise<ProxyRecord | undefined> {
    const [row] = await this.#sql.query<Row>(
      `UPDATE proxies SET name = $3, name_folded = $4
        WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
      [organizationId, id, name, fold(name)],
    );
    return row && fromRow(row);
  }

  /** Stores what a health check learned; undefined when the organization has no such active proxy. */
  async recordCheck(organizationId: string, id: string, result: ProxyCheckResult): Promise<ProxyRecord | undefined> {
    const [row] = await this.#sql.query<Row>(
      `UPDATE proxies SET status = COALESCE($3, status), ip_address = COALESCE($4, ip_address), last_checked = $5
        WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
      [organizationId, id, result.status ?? null, result.ipAddress ?? null, result.checkedAt],
    );
    return row && fromRow(row);
  }

  /** Soft delete; false when the organization has no such active proxy. */
  async markDeleted(organizationId: string, id: string, at: string): Promise<boolean> {
    return (
      (await this.#sql.execute(
        "UPDATE proxies SET deleted_at = $3 WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL",
        [organizationId, id, at],
      )) > 0
    );
  }
}
