import { ApiError } from "../errors.ts";

/** Proxy checks one organization may run at once, and start per minute, on this replica. */
export interface CheckLimitSettings {
  concurrent: number;
  perMinute: number;
}

const WINDOW_MS = 60_000;

interface OrganizationChecks {
  /** When each running check started, oldest first; at most `concurrent` entries. */
  running: number[];
  /** When each check of the last minute started, oldest first; at most `perMinute` entries. */
  started: number[];
}

function tooMany(message: string, waitMs: number): ApiError {
  return new ApiError("too_many_requests", message, { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
}

/**
 * Bounds each organization's proxy checks on this replica. A check may hold a socket to the proxy
 * for its whole timeout, so without a bound one tenant could tie up the gateway's sockets and
 * outbound connections. Kept in memory only: what an organization has not used for a minute is
 * forgotten, and the one timer that forgets it runs only while something is remembered, unref'd.
 */
export class ProxyCheckLimits {
  readonly #settings: CheckLimitSettings;
  readonly #longestCheckMs: number;
  readonly #organizations = new Map<string, OrganizationChecks>();
  #sweep: NodeJS.Timeout | undefined;

  /** longestCheckMs: a running check has ended at the latest this long after it started. */
  constructor(settings: CheckLimitSettings, longestCheckMs: number) {
    this.#settings = settings;
    this.#longestCheckMs = longestCheckMs;
  }

  /**
   * Counts a check of the organization as started and running, or throws 429 too_many_requests with
   * Retry-After when it may not start now. Returns what ends it (once, however often it is called).
   */
  begin(organizationId: string): () => void {
    const now = Date.now();
    const checks = this.#organizations.get(organizationId) ?? { running: [], started: [] };
    this.#forgetBefore(checks, now - WINDOW_MS);
    const { concurrent, perMinute } = this.#settings;
    const [oldestRunning] = checks.running;
    if (oldestRunning !== undefined && checks.running.length >= concurrent) {
      throw tooMany(
        `this organization already runs ${concurrent} proxy checks, the most it may run at once; try again when one has finished`,
        oldestRunning + this.#longestCheckMs - now,
      );
    }
    const [oldestStarted] = checks.started;
    if (oldestStarted !== undefined && checks.started.length >= perMinute) {
      throw tooMany(
        `this organization started ${perMinute} proxy checks within the last minute, the most it may start per minute`,
        oldestStarted + WINDOW_MS - now,
      );
    }
    checks.running.push(now);
    checks.started.push(now);
    this.#organizations.set(organizationId, checks);
    this.#scheduleSweep();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      checks.running.splice(checks.running.indexOf(now), 1);
    };
  }

  #forgetBefore(checks: OrganizationChecks, cutoff: number): void {
    const expired = checks.started.findIndex((at) => at > cutoff);
    checks.started.splice(0, expired === -1 ? checks.started.length : expired);
  }

  #scheduleSweep(): void {
    if (this.#sweep) return;
    this.#sweep = setTimeout(() => {
      this.#sweep = undefined;
      const cutoff = Date.now() - WINDOW_MS;
      for (const [organizationId, checks] of this.#organizations) {
        this.#forgetBefore(checks, cutoff);
        if (checks.running.length === 0 && checks.started.length === 0) this.#organizations.delete(organizationId);
      }
      if (this.#organizations.size > 0) this.#scheduleSweep();
    }, WINDOW_MS);
    // Forgetting is no reason to keep the process alive.
    this.#sweep.unref();
  }
}
