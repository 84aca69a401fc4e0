import { setTimeout as sleep } from "node:timers/promises";
import { fnv1a } from "@browser-infra/contract";
import type { Membership } from "../store/sql-client.ts";

const FIRST_JOIN_WAIT_MS = 2_000;

/**
 * The member that checks `address`: the one with the highest score for it (rendezvous hashing),
 * so when a member leaves only its own hosts move, each to one of the others, and when one joins
 * it takes about its share from each.
 */
export function ownerOf(address: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const member of members) {
    const score = fnv1a(`${member}|${address}`);
    if (score > bestScore || (score === bestScore && best !== undefined && member < best)) {
      best = member;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Which hosts this gateway checks. Gateways sharing a PostgreSQL store split the hosts between the
 * live ones (see PostgresMembership), so the checks cost as much for ten replicas as for one; a
 * gateway on SQLite is alone, and one that cannot tell who else is live (its membership connection
 * is down) checks every host rather than leave some unchecked: a check made twice is harmless.
 */
export class HostCheckShare {
  readonly #membership: Membership | undefined;
  #first = true;

  constructor(membership: Membership | undefined) {
    this.#membership = membership;
  }

  /** A test of whether this gateway checks a host, valid for one round of checks. */
  async current(): Promise<(address: string) => boolean> {
    // The first round waits a moment for the membership: a replica starting beside others would
    // otherwise check (and open a channel to) every host once.
    if (this.#first && this.#membership) {
      this.#first = false;
      await Promise.race([this.#membership.joined, sleep(FIRST_JOIN_WAIT_MS, undefined, { ref: false })]);
    }
    const self = this.#membership?.self;
    const members = self === undefined ? undefined : await this.#membership?.members().catch(() => undefined);
    if (self === undefined || members === undefined || !members.includes(self)) return () => true;
    return (address) => ownerOf(address, members) === self;
  }

  close(): Promise<void> {
    return this.#membership?.close() ?? Promise.resolve();
  }
}

/** The advisory-lock group the gateways that share a store join to split the host checks ("host"). */
export const HOST_CHECKERS_GROUP = 0x686f7374;
