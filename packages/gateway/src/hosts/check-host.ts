import { stateVersion } from "@browser-infra/contract";
import { AGENT_RESTARTED_REASON, type SessionLifecycle } from "../browsers/session-lifecycle.ts";
import { keepHostHealthOf, setHostHealth } from "../metrics/host-health.ts";
import type { HostCheckResult, HostDescription, HostRecord } from "../store/hosts.ts";
import type { Store } from "../store/store.ts";
import type { HostCheckShare } from "./check-share.ts";
import type { HostPool } from "./host-pool.ts";
import type { LivenessProbes } from "./liveness-probes.ts";

export interface HostCheckDeps {
  store: Store;
  hosts: HostPool;
  lifecycle: SessionLifecycle;
  /** Deadline of each call to the agent. */
  timeoutMs: number;
  /** Which hosts this gateway checks; undefined: all of them. */
  share?: HostCheckShare;
  /** Keeps this gateway informed of the hosts it checks without a connection; undefined: health streams only. */
  probes?: LivenessProbes;
  /**
   * When each host's Describe last answered: an idle host whose health stream says it serves is
   * described again only after IDLE_DESCRIBE_MS. Undefined: every round describes every host.
   */
  describedAt?: Map<string, number>;
  /** Told of every change of a host's health this gateway's checks find. */
  onChange?: (address: string, from: string, to: HostCheckResult) => void;
}

/**
 * How often an idle host whose health stream says it serves is described anyway: what Describe
 * adds then is a session the agent runs that the store does not give it (a start whose answer was
 * lost), which is stopped at the latest this long after. A restarted agent ends its stream, and
 * is checked at once.
 */
const IDLE_DESCRIBE_MS = 30_000;
/**
 * The same for a host that answers liveness probes: their version tells of a session or a restart
 * at once, so Describe is repeated only for what it alone says (a screen whose size changed).
 */
const PROBED_DESCRIBE_MS = 300_000;

function describePeriod(deps: HostCheckDeps, address: string): number {
  return deps.probes?.usable(address) ? PROBED_DESCRIBE_MS : IDLE_DESCRIBE_MS;
}

/** Checks the host now: something it said (or its silence) may have changed its health. */
function checkOnNews(deps: HostCheckDeps, address: string): void {
  void (async () => {
    const stored = await deps.store.hosts.find(address);
    const result = await checkHost(deps, address, stored);
    if (stored && result.health !== stored.health) deps.onChange?.(address, stored.health, result);
  })().catch(() => undefined);
}

/**
 * Keeps this gateway told of the agent's news (it stops serving, it serves again, its session or
 * run changed, it died), so that the host is checked at once rather than at the next round: a
 * dead host leaves the pool within seconds, though only one gateway checks it. Liveness probes
 * need no connection; an agent that does not answer them has its health stream watched.
 */
function keepInformed(deps: HostCheckDeps, address: string, result: HostCheckResult): void {
  const health = result.health === "serving" ? "serving" : "not_serving";
  if (deps.probes?.usable(address)) {
    const version = result.running && stateVersion(result.running.agentInstance, result.running.sessionId);
    deps.probes.track(address, { status: health, version }, () => checkOnNews(deps, address));
    return;
  }
  deps.hosts.watchHealth(address, health, () => checkOnNews(deps, address));
}

/** What the host's probes or health stream say now, when it is what its last check found. */
function pushedHealth(deps: HostCheckDeps, address: string): "serving" | "not_serving" | undefined {
  return deps.hosts.pushedHealth(address) ?? deps.probes?.confirmed(address);
}

/** Whether an idle serving host's check can wait: its probes or health stream say it serves, and it was described lately. */
function describedLately(deps: HostCheckDeps, host: HostRecord): boolean {
  if (host.health !== "serving" || host.sessionId || host.stoppingSessionId) return false;
  if (pushedHealth(deps, host.address) !== "serving") return false;
  const at = deps.describedAt?.get(host.address);
  return at !== undefined && performance.now() - at < describePeriod(deps, host.address);
}

/** A channel to an idle host this gateway does not check, or probes, is closed after this long unused. */
const UNUSED_CHANNEL_MS = 15_000;

function sameDescription(a: HostDescription | null | undefined, b: HostDescription | null | undefined): boolean {
  return (
    a?.agentVersion === b?.agentVersion &&
    a?.display === b?.display &&
    a?.screenWidth === b?.screenWidth &&
    a?.screenHeight === b?.screenHeight
  );
}

/**
 * Whether a check found something the store does not know yet. Only then is it written: a fleet
 * whose hosts stay as they are costs the store no write at all. Why a host is not serving
 * (the detail) is written with a change of health, not each time its wording changes.
 */
function changed(stored: HostRecord | undefined, result: HostCheckResult): boolean {
  if (!stored || stored.health !== result.health) return true;
  return result.health === "serving" && !sameDescription(stored.description, result.description);
}

/**
 * Asks the agent's health service whether it serves and, when it does, what it offers and runs
 * (Describe), stores the answer, and brings the host in line with the store (reconcile). Only a
 * host that answered both can take a session.
 */
export async function checkHost(deps: HostCheckDeps, address: string, stored?: HostRecord): Promise<HostCheckResult> {
  const checkedAt = new Date().toISOString();
  let result: HostCheckResult;
  try {
    // A live health stream or a fresh probe answer has it already; without one the agent is asked.
    const pushed = pushedHealth(deps, address);
    if (pushed ? pushed === "serving" : await deps.hosts.serving(address, deps.timeoutMs)) {
      const described = await deps.hosts.client(address, { byCheck: true }).describe({}, { timeoutMs: deps.timeoutMs });
      // Backdated by up to half the period, at random: hosts checked together at start are not all
      // described again in the same round.
      deps.describedAt?.set(address, performance.now() - (Math.random() * describePeriod(deps, address)) / 2);
      result = {
        health: "serving",
        detail: null,
        checkedAt,
        description: {
          agentVersion: described.agentVersion,
          display: described.display,
          screenWidth: described.screenWidth,
          screenHeight: described.screenHeight,
        },
        running: { sessionId: described.sessionId, agentInstance: described.agentInstance },
      };
    } else {
      result = { health: "not_serving", detail: "the agent's health service answers NOT_SERVING", checkedAt };
    }
  } catch (error) {
    result = { health: "unreachable", detail: (error as Error).message, checkedAt };
  }
  if (changed(stored, result)) await deps.store.hosts.recordCheck(address, result);
  if (result.health !== "unreachable") keepInformed(deps, address, result);
  setHostHealth(address, result.health === "serving");
  // A host idle in the store that the agent finds idle too has nothing to bring in line: no read.
  const idle = stored && !stored.sessionId && !stored.stoppingSessionId && result.running?.sessionId === "";
  if (result.running && !idle) await reconcile(deps, address, result.running);
  return result;
}

/**
 * What the agent runs against what the store says it should, read after the Describe so that a
 * session started meanwhile is seen as started:
 * - a stop the agent never confirmed (it was unreachable) is made now, and frees the host;
 * - the session the host holds, once started, that the agent no longer runs (its browser died
 *   unwatched, or the agent restarted, which wipes everything) is ended, after the agent
 *   confirmed it, since the Describe may predate the start;
 * - a session the agent runs that the store does not give it (a start whose answer was lost) is stopped.
 */
async function reconcile(deps: HostCheckDeps, address: string, running: { sessionId: string; agentInstance: string }) {
  const { store, lifecycle } = deps;
  const host = await store.hosts.find(address);
  if (!host) return;
  // Stops can take long (a browser that dies slowly): they run on their own, not in the check round.
  if (host.stoppingSessionId) lifecycle.stopInBackground(address, host.stoppingSessionId);
  if (host.sessionId) {
    const session = await store.browserSessions.findActiveById(host.sessionId);
    const restarted = session?.agentInstance != null && session.agentInstance !== running.agentInstance;
    if (session?.agentInstance && (restarted || running.sessionId !== session.id)) {
      const reason = await lifecycle.endedOnHost(session);
      if (reason !== undefined) lifecycle.endInBackground(session.id, restarted ? AGENT_RESTARTED_REASON : reason);
    }
  }
  if (running.sessionId && running.sessionId !== host.sessionId && running.sessionId !== host.stoppingSessionId) {
    lifecycle.stopInBackground(address, running.sessionId);
  }
}

/**
 * Checks once, in parallel, every known host that is this gateway's to check (see HostCheckShare).
 * Two gateways may check one host at the same time (while one joins or leaves): a result is stored
 * only if no check that started later was stored first.
 */
export async function checkAllHosts(deps: HostCheckDeps): Promise<void> {
  const [known, mine] = await Promise.all([deps.store.hosts.list(), deps.share?.current() ?? (() => true)]);
  keepHostHealthOf(known.map((host) => host.address));
  deps.probes?.retain(new Set(known.filter((host) => mine(host.address)).map((host) => host.address)));
  let next = 0;
  const worker = async () => {
    while (next < known.length) await checkInRound(deps, known[next++] as HostRecord, mine);
  };
  await Promise.all(Array.from({ length: Math.min(ROUND_CONCURRENCY, known.length) }, worker));
}

/**
 * How many hosts a round checks at once: enough that a thousand take well under a round, few
 * enough that a gateway starting beside a thousand idle hosts never holds a connection to each.
 */
const ROUND_CONCURRENCY = 32;

/**
 * One host's part of a round. A connection is kept only while something needs it: a session's
 * calls, or the health stream of a host that does not answer probes. The channel of an idle host
 * that another gateway checks, or that this one probes, is closed once no call other than a
 * check has used it for UNUSED_CHANNEL_MS (a create that just took it keeps it).
 */
async function checkInRound(deps: HostCheckDeps, host: HostRecord, mine: (address: string) => boolean): Promise<void> {
  const idle = !host.sessionId && !host.stoppingSessionId;
  if (!mine(host.address)) {
    // Another gateway checks it: this one's metric follows the store.
    setHostHealth(host.address, host.health === "serving");
    if (idle) deps.hosts.release(host.address, UNUSED_CHANNEL_MS);
    return;
  }
  if (!describedLately(deps, host)) {
    const result = await checkHost(deps, host.address, host);
    if (result.health !== host.health) deps.onChange?.(host.address, host.health, result);
  }
  if (idle && deps.probes?.usable(host.address)) deps.hosts.release(host.address, UNUSED_CHANNEL_MS);
}
