import { HostRepository, type HostRequirements } from "./hosts.ts";
import { type SqlClient, UniqueViolationError } from "./sql-client.ts";

export interface BrowserSessionRecord {
  id: string;
  organizationId: string;
  name: string | null;
  /** gRPC address (host:port) of the host agent the session runs on. */
  hostAddress: string;
  createdAt: string;
  deletedAt: string | null;
  /** Seconds without press_key or file_info after which the session ends. */
  timeoutSeconds: number;
  /** The host has no X display. */
  headless: boolean;
  proxyId: string | null;
  tags: Record<string, string> | null;
  /** The browser window's size; null when unknown (a host without a browser or display). */
  viewport: { width: number; height: number } | null;
  /** The session's browser's DevTools WebSocket URL; null until it started, or on a host that runs no browser. */
  cdpWsUrl: string | null;
  lastActiveAt: string | null;
  /** When the session ends unless it is used; null: never (sessions older than idle timeouts). */
  idleDeadline: string | null;
  /** Why the session ended; null while it is active (and for sessions that ended before reasons were kept). */
  endReason: string | null;
  /** The run of the host agent that started its browser; null until the browser started. */
  agentInstance: string | null;
}

/** What the host agent reported when it started the session's browser. */
export interface BrowserStart {
  cdpWsUrl: string | null;
  headless: boolean;
  viewport: { width: number; height: number } | null;
  agentInstance: string;
}

type HostFacts = "hostAddress" | "headless" | "viewport" | "cdpWsUrl";
type Derived = "deletedAt" | "lastActiveAt" | "idleDeadline" | "endReason" | "agentInstance";

/** A session bound to a given host by hand (tools, tests); omitted fields take the defaults. */
export type BoundSession = Pick<BrowserSessionRecord, "id" | "organizationId" | "name" | "hostAddress" | "createdAt"> &
  Partial<Omit<BrowserSessionRecord, Derived>>;

/** What a new session asks for; the host it lands on supplies the rest. */
export type SessionRequest = Omit<BrowserSessionRecord, HostFacts | Derived>;

/** organization_limit: the organization already holds as many active sessions as it may. */
export type CreateOutcome =
  | { session: BrowserSessionRecord }
  | { failure: "name_taken" | "no_host" | "organization_limit" };

export type SessionStatusFilter = "active" | "deleted" | "all";

interface Row {
  id: string;
  organization_id: string;
  name: string | null;
  host_address: string;
  created_at: string;
  deleted_at: string | null;
  timeout_seconds: number;
  headless: number;
  proxy_id: string | null;
  tags: string | null;
  viewport_width: number | null;
  viewport_height: number | null;
  cdp_ws_url: string | null;
  last_active_at: string | null;
  idle_deadline: string | null;
  end_reason: string | null;
  agent_instance: string | null;
}

/** What a new row is inserted with; end_reason and agent_instance come later. */
const INSERTED_COLUMNS =
  "id, organization_id, name, host_address, created_at, deleted_at, timeout_seconds, headless, proxy_id, tags, viewport_width, viewport_height, cdp_ws_url, last_active_at, idle_deadline";
const COLUMNS = `${INSERTED_COLUMNS}, end_reason, agent_instance`;

export const DEFAULT_TIMEOUT_SECONDS = 60;
export const IDLE_REASON = "idle timeout";

function fromRow(row: Row): BrowserSessionRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    hostAddress: row.host_address,
    createdAt: row.created_at,
    deletedAt: row.deleted_at,
    timeoutSeconds: Number(row.timeout_seconds),
    headless: Boolean(Number(row.headless)),
    proxyId: row.proxy_id,
    tags: row.tags === null ? null : (JSON.parse(row.tags) as Record<string, string>),
    viewport:
      row.viewport_width === null || row.viewport_height === null
        ? null
        : { width: Number(row.viewport_width), height: Number(row.viewport_height) },
    cdpWsUrl: row.cdp_ws_url,
    lastActiveAt: row.last_active_at,
    idleDeadline: row.idle_deadline,
    endReason: row.end_reason,
    agentInstance: row.agent_instance,
  };
}

function plusSeconds(at: string, seconds: number): string {
  return new Date(Date.parse(at) + seconds * 1000).toISOString();
}

export class BrowserSessionRepository {
  readonly #sql: SqlClient;

  constructor(sql: SqlClient) {
    this.#sql = sql;
  }

  /** Throws UniqueViolationError when the organization has an active session with this name. */
  async insert(session: BoundSession): Promise<void> {
    await this.#insert(session);
  }

  async #insert(session: BoundSession): Promise<BrowserSessionRecord> {
    const timeoutSeconds = session.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
    const record: BrowserSessionRecord = {
      headless: false,
      proxyId: null,
      tags: null,
      viewport: null,
      cdpWsUrl: null,
      ...session,
      timeoutSeconds,
      deletedAt: null,
      lastActiveAt: session.createdAt,
      idleDeadline: plusSeconds(session.createdAt, timeoutSeconds),
      endReason: null,
      agentInstance: null,
    };
    await this.#sql.execute(
      `INSERT INTO browser_sessions (${INSERTED_COLUMNS})
        VALUES ($1, $2, $3, $4, $5, NULL, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        record.id,
        record.organizationId,
        record.name,
        record.hostAddress,
        record.createdAt,
        record.timeoutSeconds,
        record.headless ? 1 : 0,
        record.proxyId,
        record.tags === null ? null : JSON.stringify(record.tags),
        record.viewport?.width ?? null,
        record.viewport?.height ?? null,
        record.cdpWsUrl,
        record.lastActiveAt,
        record.idleDeadline,
      ],
    );
    return record;
  }

  /**
   * Creates the session on an idle serving host meeting the requirements, in one transaction:
   * concurrent callers, on any replica, never get the same host, and a failed create takes none.
   * With maxActivePerOrganization above 0, the organization never holds more active sessions than
   * that, however many creates run at once on however many replicas.
   */
  async createOnIdleHost(
    request: SessionRequest,
    requirements: HostRequirements,
    maxActivePerOrganization = 0,
  ): Promise<CreateOutcome> {
    try {
      return await this.#sql.transaction(async (tx): Promise<CreateOutcome> => {
        const sessions = new BrowserSessionRepository(tx);
        if (maxActivePerOrganization > 0) await sessions.#lockOrganization(request.organizationId);
        // Checked before a host is chosen, so a clash says 409 even when every host is busy.
        if (request.name !== null && (await sessions.#nameTaken(request.organizationId, request.name))) {
          return { failure: "name_taken" };
        }
        // Also before a host is chosen: at its limit, the organization is told so whether or not a host is free.
        if (
          maxActivePerOrganization > 0 &&
          (await sessions.#activeCount(request.organizationId)) >= maxActivePerOrganization
        ) {
          return { failure: "organization_limit" };
        }
        const hosts = new HostRepository(tx);
        const host = await hosts.lockIdle(requirements);
        if (!host) return { failure: "no_host" };
        const description = host.description;
        // What the host's Describe said; the browser's own facts replace them once it started (recordStart).
        const session = await sessions.#insert({
          ...request,
          hostAddress: host.address,
          headless: !description?.display,
          viewport:
            description?.display && description.screenWidth > 0
              ? { width: description.screenWidth, height: description.screenHeight }
              : null,
          cdpWsUrl: null,
        });
        if (!(await hosts.assign(host.address, session.id))) {
          throw new Error(`host ${host.address} was taken while locked`);
        }
        return { session };
      });
    } catch (error) {
      // Two creates with one name raced past the check; the unique index let one through.
      if (error instanceof UniqueViolationError) return { failure: "name_taken" };
      throw error;
    }
  }

  /**
   * Makes concurrent creates of one organization take turns until their transactions end, so each
   * counts the sessions the others committed. On PostgreSQL the organization's row is locked (FOR NO
   * KEY UPDATE: foreign key checks of inserts elsewhere, which take FOR KEY SHARE, do not wait for it);
   * on SQLite BEGIN IMMEDIATE already lets one writer in at a time.
   */
  async #lockOrganization(organizationId: string): Promise<void> {
    if (this.#sql.dialect !== "postgres") return;
    await this.#sql.query("SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE", [organizationId]);
  }

  async #activeCount(organizationId: string): Promise<number> {
    const [row] = await this.#sql.query<{ active: number | string }>(
      "SELECT COUNT(*) AS active FROM browser_sessions WHERE organization_id = $1 AND deleted_at IS NULL",
      [organizationId],
    );
    return Number(row?.active ?? 0);
  }

  async #nameTaken(organizationId: string, name: string): Promise<boolean> {
    const rows = await this.#sql.query(
      "SELECT id FROM browser_sessions WHERE organization_id = $1 AND name = $2 AND deleted_at IS NULL",
      [organizationId, name],
    );
    return rows.length > 0;
  }

  /**
   * The organization's active session with this id, else with this name.
   * An id always wins, so a session named like another's id stays reachable by id.
   */
  async findActive(organizationId: string, idOrName: string): Promise<BrowserSessionRecord | undefined> {
    return this.find(organizationId, idOrName, false);
  }

  /**
   * Like findActive; with includeDeleted also ended sessions: the one with this id, else the
   * active one with this name, else the one with this name that ended last.
   */
  async find(
    organizationId: string,
    idOrName: string,
    includeDeleted: boolean,
  ): Promise<BrowserSessionRecord | undefined> {
    const [row] = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM browser_sessions
        WHERE organization_id = $1 AND (id = $2 OR name = $2)${includeDeleted ? "" : " AND deleted_at IS NULL"}
        ORDER BY CASE WHEN id = $2 THEN 0 WHEN deleted_at IS NULL THEN 1 ELSE 2 END, deleted_at DESC
        LIMIT 1`,
      [organizationId, idOrName],
    );
    return row && fromRow(row);
  }

  /** One page of the organization's sessions, oldest first. */
  async list(
    organizationId: string,
    filter: { status: SessionStatusFilter; offset: number; limit: number },
  ): Promise<{ items: BrowserSessionRecord[]; hasMore: boolean }> {
    const status = {
      active: " AND deleted_at IS NULL",
      deleted: " AND deleted_at IS NOT NULL",
      all: "",
    }[filter.status];
    // One row beyond the page tells whether another page follows.
    const rows = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM browser_sessions WHERE organization_id = $1${status}
        ORDER BY created_at, id LIMIT $2 OFFSET $3`,
      [organizationId, filter.limit + 1, filter.offset],
    );
    return { items: rows.slice(0, filter.limit).map(fromRow), hasMore: rows.length > filter.limit };
  }

  /** Records use of an active session, pushing its idle deadline back; false when it has ended. */
  async touch(session: BrowserSessionRecord, at: string): Promise<boolean> {
    return (
      (await this.#sql.execute(
        "UPDATE browser_sessions SET last_active_at = $2, idle_deadline = $3 WHERE id = $1 AND deleted_at IS NULL",
        [session.id, at, plusSeconds(at, session.timeoutSeconds)],
      )) > 0
    );
  }

  /** Records the session's started browser; false when the session ended meanwhile. */
  async recordStart(id: string, start: BrowserStart): Promise<boolean> {
    return (
      (await this.#sql.execute(
        `UPDATE browser_sessions SET cdp_ws_url = $2, headless = $3, viewport_width = $4, viewport_height = $5,
          agent_instance = $6 WHERE id = $1 AND deleted_at IS NULL`,
        [
          id,
          start.cdpWsUrl,
          start.headless ? 1 : 0,
          start.viewport?.width ?? null,
          start.viewport?.height ?? null,
          start.agentInstance,
        ],
      )) > 0
    );
  }

  /** The active session with this id, whatever its organization (for the gateway's own bookkeeping). */
  async findActiveById(id: string): Promise<BrowserSessionRecord | undefined> {
    const [row] = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM browser_sessions WHERE id = $1 AND deleted_at IS NULL`,
      [id],
    );
    return row && fromRow(row);
  }

  /**
   * Ends the active session with this id (of this organization, when given), with the reason, and
   * marks its host as being stopped for it: the host takes no new session until its agent
   * confirmed the stop. Returns the ended session, or undefined when it was not active.
   */
  async end(
    id: string,
    at: string,
    reason: string,
    organizationId?: string,
  ): Promise<BrowserSessionRecord | undefined> {
    return this.#sql.transaction(async (tx) => {
      const [row] = await tx.query<Row>(
        `UPDATE browser_sessions SET deleted_at = $2, end_reason = $3
          WHERE id = $1 AND deleted_at IS NULL${organizationId === undefined ? "" : " AND organization_id = $4"}
          RETURNING ${COLUMNS}`,
        organizationId === undefined ? [id, at, reason] : [id, at, reason, organizationId],
      );
      if (row) await new HostRepository(tx).beginStop(id);
      return row && fromRow(row);
    });
  }

  /**
   * Ends every active session whose idle deadline has passed and marks its host as being
   * stopped. The conditional UPDATE lets exactly one caller end each session, however many
   * replicas run this at once.
   */
  async endIdle(now: string): Promise<BrowserSessionRecord[]> {
    return this.#sql.transaction(async (tx) => {
      const rows = await tx.query<Row>(
        `UPDATE browser_sessions SET deleted_at = $1, end_reason = $2
          WHERE deleted_at IS NULL AND idle_deadline < $1 RETURNING ${COLUMNS}`,
        [now, IDLE_REASON],
      );
      const hosts = new HostRepository(tx);
      for (const row of rows) await hosts.beginStop(row.id);
      return rows.map(fromRow);
    });
  }
}
