import { promises as dns, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { HOST_PORT } from "../config.ts";
import type { Logger } from "../logger.ts";
import { type PeriodicTask, runPeriodically } from "../periodic.ts";
import type { Store } from "../store/store.ts";

/** How a name is resolved: dns.promises.lookup's shape, so getaddrinfo (and /etc/hosts) answers. */
export type Lookup = (name: string, options: { all: true }) => Promise<LookupAddress[]>;

export interface DiscoveryDeps {
  store: Pick<Store, "hosts">;
  /** Default: dns.promises.lookup, every A and AAAA address of the name. */
  lookup?: Lookup;
  /** Addresses never removed by discovery (HOST_AGENTS: every replica lists the same ones). */
  keep?: readonly string[];
}

export type DiscoveryResult =
  | {
      resolved: true;
      /** Every host agent address the name resolves to, sorted. */
      addresses: string[];
      /** Those that were new to the store. */
      registered: string[];
      /** Hosts that no longer resolve and were forgotten. */
      removed: string[];
    }
  | { resolved: false; error: Error };

/** host:port as the store and the CLI write it: an IPv6 host in brackets. */
function hostPort(address: string, port: number): string {
  return isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
}

/** The host part and port of host:port when the host is an IP address, else undefined. */
function ipAndPort(address: string): { ip: string; port: number } | undefined {
  const [, ip = "", port = ""] = /^\[?([^\]]*)\]?:(\d+)$/.exec(address) ?? [];
  return isIP(ip) === 0 ? undefined : { ip, port: Number(port) };
}

/**
 * One round of HOST_AGENTS_DNS: every address `name` resolves to is a host agent on `port`, and
 * is registered as a host (registering a known host changes nothing).
 *
 * The store does not record how a host was added, and remembering what this replica registered
 * would not survive a restart nor be shared with the other replicas, so a host is forgotten only
 * when all of these hold, and otherwise is left to the health checks and `hosts remove`:
 * - its address is an IP address (what discovery registers; a DNS name from HOST_AGENTS or the CLI
 *   is never touched) at `port`, and is not in `keep` (HOST_AGENTS);
 * - the name resolved, and not to it;
 * - its last check did not find it `serving` (a live agent added some other way stays; one that
 *   left DNS but still serves goes once a check finds it gone);
 * - it holds no session (store.hosts.remove refuses a held host, atomically).
 * A host another replica found serving between this round's list and its remove may still be
 * forgotten; the replica that resolves it registers it again in its next round.
 *
 * A failed resolution, or one with no address the gateway can dial (getaddrinfo answers a name
 * without addresses with ENOTFOUND), changes nothing, so a DNS outage, or every agent down at once, never empties the host table.
 */
export async function discover(deps: DiscoveryDeps, name: string, port: number): Promise<DiscoveryResult> {
  const lookup: Lookup = deps.lookup ?? dns.lookup;
  let answers: LookupAddress[];
  try {
    answers = await lookup(name, { all: true });
  } catch (error) {
    return { resolved: false, error: error as Error };
  }
  // A scoped IPv6 address (fe80::1%eth0) is no address the gateway can dial by host:port.
  const addresses = [...new Set(answers.map((answer) => hostPort(answer.address, port)))]
    .filter((address) => HOST_PORT.test(address))
    .sort();
  if (addresses.length === 0) return { resolved: false, error: new Error(`${name} resolved to no usable address`) };
  const at = new Date().toISOString();
  const registered: string[] = [];
  for (const address of addresses) {
    if (await deps.store.hosts.register(address, at)) registered.push(address);
  }
  const current = new Set(addresses);
  const keep = new Set(deps.keep ?? []);
  const removed: string[] = [];
  for (const host of await deps.store.hosts.list()) {
    if (current.has(host.address) || keep.has(host.address)) continue;
    if (ipAndPort(host.address)?.port !== port) continue;
    if (host.health === "serving" || host.sessionId !== null) continue;
    if ((await deps.store.hosts.remove(host.address)) === "removed") removed.push(host.address);
  }
  return { resolved: true, addresses, registered, removed };
}

/**
 * Runs discover now, then every intervalMs. Resolves after the first round, so the gateway's first
 * host check round already sees the agents the name resolves to.
 */
export async function startDnsDiscovery(
  deps: DiscoveryDeps,
  target: { name: string; port: number },
  intervalMs: number,
  logger: Logger,
): Promise<PeriodicTask> {
  const { name, port } = target;
  const round = async () => {
    const result = await discover(deps, name, port);
    if (!result.resolved) {
      logger.warn({ name, err: result.error }, "HOST_AGENTS_DNS did not resolve; hosts left as they are");
      return;
    }
    for (const host of result.registered) logger.info({ host, name }, "host agent discovered by DNS");
    for (const host of result.removed) logger.info({ host, name }, "host agent no longer in DNS; forgotten");
  };
  const onError = (error: unknown) => logger.error({ err: error, name }, "host discovery round failed");
  await round().catch(onError);
  return runPeriodically(round, intervalMs, onError);
}
