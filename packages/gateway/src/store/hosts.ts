import type { SqlClient } from "./sql-client.ts";

export const HOST_HEALTHS = ["unknown", "serving", "not_serving", "unreachable"] as const;
export type HostHealth = (typeof HOST_HEALTHS)[number];

/** What a host agent says about itself (its Describe answer). */
export interface HostDescription {
  agentVersion: string;
  /** X display; empty when the host has none. */
  display: string;
  /** Size of the display's root window; 0 when unknown. */
  screenWidth: number;
  screenHeight: number;
}

export interface HostRecord {
  address: string;
  health: HostHealth;
  /** Why the last check did not find the host serving. */
  healthDetail: string | null;
  checkedAt: string | null;
  /** From the last Describe that answered; null before the first. */
  description: HostDescription | null;
  /** The session that holds the host; null when it is idle. */
  sessionId: string | null;
  /** A session that ended but whose stop the agent has not confirmed yet; the host takes no session until it does. */
  stoppingSessionId: string | null;
  addedAt: string;
}

export interface HostCheckResult {
  health: Exclude<HostHealth, "unknown">;
  detail: string | null;
  /** When the check started: a slower check that started earlier never overwrites a newer result. */
  checkedAt: string;
  /** Only with health "serving". */
  description?: HostDescription;
  /** What the agent runs now (only with health "serving"); not stored: the sessions table says what it should run. */
  running?: { sessionId: string; agentInstance: string };
}

/** Which hosts may take a session; absent fields accept any host. */
export interface HostRequirements {
  /** true: a host without an X display; false: a host with one. */
  headless?: boolean;
  screen?: { width: number; height: number };
}

interface Row {
  address: string;
  health: HostHealth;
  health_detail: string | null;
  checked_at: string | null;
  agent_version: string | null;
  display: string | null;
  screen_width: number | null;
  screen_height: number | null;
  session_id: string | null;
  stopping_session_id: string | null;
  added_at: string;
}

const COLUMNS =
  "address, health, health_detail, checked_at, agent_version, display, screen_width, screen_height, session_id, stopping_session_id, added_at";

function fromRow(row: Row): HostRecord {
  return {
    address: row.address,
    health: row.health,
    healthDetail: row.health_detail,
    checkedAt: row.checked_at,
    description:
      row.agent_version === null
        ? null
        : {
            agentVersion: row.agent_version,
            display: row.display ?? "",
            screenWidth: Number(row.screen_width ?? 0),
            screenHeight: Number(row.screen_height ?? 0),
          },
    sessionId: row.session_id,
    stoppingSessionId: row.stopping_session_id,
    addedAt: row.added_at,
  };
}

export class HostRepository {
  readonly #sql: SqlClient;

  constructor(sql: SqlClient) {
    this.#sql = sql;
  }

  /** Adds the host unless it is known; safe when several replicas register the same host at once. */
  async register(address: string, at: string): Promise<boolean> {
    return (
      (await this.#sql.execute(
        "INSERT INTO hosts (address, health, added_at) VALUES ($1, 'unknown', $2) ON CONFLICT (address) DO NOTHING",
        [address, at],
      )) > 0
    );
  }

  async list(): Promise<HostRecord[]> {
    return (await this.#sql.query<Row>(`SELECT ${COLUMNS} FROM hosts ORDER BY address`)).map(fromRow);
  }

  async find(address: string): Promise<HostRecord | undefined> {
    const [row] = await this.#sql.query<Row>(`SELECT ${COLUMNS} FROM hosts WHERE address = $1`, [address]);
    return row && fromRow(row);
  }

  /** Forgets an idle host; a host that holds a session, or is being stopped, stays. */
  async remove(address: string): Promise<"removed" | "held" | "absent"> {
    if (
      (await this.#sql.execute(
        "DELETE FROM hosts WHERE address = $1 AND session_id IS NULL AND stopping_session_id IS NULL",
        [address],
      )) > 0
    ) {
      return "removed";
    }
    return (await this.find(address)) ? "held" : "absent";
  }

  /** Stores a check's outcome unless a check that started later has already been stored. */
  async recordCheck(address: string, result: HostCheckResult): Promise<boolean> {
    const params: unknown[] = [address, result.health, result.detail, result.checkedAt];
    let describe = "";
    const d = result.description;
    if (d) {
      params.push(d.agentVersion, d.display, d.screenWidth, d.screenHeight);
      describe = ", agent_version = $5, display = $6, screen_width = $7, screen_height = $8";
    }
    return (
      (await this.#sql.execute(
        `UPDATE hosts SET health = $2, health_detail = $3, checked_at = $4${describe}
          WHERE address = $1 AND (checked_at IS NULL OR checked_at <= $4)`,
        params,
      )) > 0
    );
  }

  /**
   * An idle serving host meeting the requirements, locked until the transaction ends. Must run
   * inside a transaction: on PostgreSQL FOR UPDATE SKIP LOCKED lets concurrent callers on any
   * replica each take a different host without waiting; SQLite's BEGIN IMMEDIATE already
   * serializes writers.
   */
  async lockIdle(requirements: HostRequirements): Promise<HostRecord | undefined> {
    const conditions = ["health = 'serving'", "session_id IS NULL", "stopping_session_id IS NULL"];
    const params: unknown[] = [];
    if (requirements.headless === true) conditions.push("(display IS NULL OR display = '')");
    if (requirements.headless === false) conditions.push("display <> ''");
    if (requirements.screen) {
      params.push(requirements.screen.width, requirements.screen.height);
      conditions.push("screen_width = $1 AND screen_height = $2");
    }
    const lock = this.#sql.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
    const [row] = await this.#sql.query<Row>(
      `SELECT ${COLUMNS} FROM hosts WHERE ${conditions.join(" AND ")} ORDER BY address LIMIT 1${lock}`,
      params,
    );
    return row && fromRow(row);
  }

  /** Gives an idle host to a session; false when the host is gone, held or still being stopped. */
  async assign(address: string, sessionId: string): Promise<boolean> {
    return (
      (await this.#sql.execute(
        "UPDATE hosts SET session_id = $2 WHERE address = $1 AND session_id IS NULL AND stopping_session_id IS NULL",
        [address, sessionId],
      )) > 0
    );
  }

  /**
   * The session's host stops holding it and is marked as being stopped for it: it takes no new
   * session until confirmStopped. Returns the host's address, or undefined when no host held it.
   */
  async beginStop(sessionId: string): Promise<string | undefined> {
    const rows = await this.#sql.query<{ address: string }>(
      "UPDATE hosts SET session_id = NULL, stopping_session_id = $1 WHERE session_id = $1 RETURNING address",
      [sessionId],
    );
    return rows[0]?.address;
  }

  /** The agent confirmed the session's stop: the host is idle again. False when it was not being stopped for it. */
  async confirmStopped(address: string, sessionId: string): Promise<boolean> {
    return (
      (await this.#sql.execute(
        "UPDATE hosts SET stopping_session_id = NULL WHERE address = $1 AND stopping_session_id = $2",
        [address, sessionId],
      )) > 0
    );
  }
}
