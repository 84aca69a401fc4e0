import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { freshStore } from "../../../../test/support/stores.ts";
import { HOST_CHECKERS_GROUP, HostCheckShare, ownerOf } from "../../src/hosts/check-share.ts";
import type { Store } from "../../src/store/store.ts";

const hosts = Array.from({ length: 3000 }, (_, i) => `10.0.${i >> 8}.${i & 255}:50051`);

describe("dealing hosts out to the live gateways", () => {
  it("gives every host to exactly one member, about evenly", () => {
    const members = ["11", "22", "33"];
    const counts = new Map<string, number>();
    for (const host of hosts) {
      const owner = ownerOf(host, members) as string;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const member of members) expect(counts.get(member)).toBeGreaterThan(hosts.length / 3 - 150);
  });

  it("moves only the hosts of a member that leaves, and leaves the others where they were", () => {
    const before = hosts.map((host) => ownerOf(host, ["11", "22", "33"]));
    const after = hosts.map((host) => ownerOf(host, ["11", "33"]));
    hosts.forEach((_, i) => {
      if (before[i] !== "22") expect(after[i]).toBe(before[i]);
      else expect(["11", "33"]).toContain(after[i]);
    });
  });
});

describe("gateways sharing a PostgreSQL store", () => {
  let store: { store: Store; dispose(): Promise<void> } | undefined;
  afterEach(async () => {
    await store?.dispose();
    store = undefined;
  });

  /** One more gateway's share of the hosts (its own membership connection, as a replica has). */
  async function replica(): Promise<HostCheckShare> {
    store ??= await freshStore("postgres");
    return new HostCheckShare(store.store.sql.join?.(HOST_CHECKERS_GROUP));
  }

  /** Waits until `share` deals out the hosts as `expected` says (each share's own test of a host). */
  async function settled(shares: HostCheckShare[], check: (mine: ((a: string) => boolean)[]) => boolean) {
    for (let tries = 0; tries < 100; tries++) {
      if (check(await Promise.all(shares.map((share) => share.current())))) return;
      await sleep(50);
    }
    throw new Error("the shares never settled");
  }

  it("split the hosts between the live ones, and a gateway that leaves hands its hosts over at once", async () => {
    const [a, b, c] = [await replica(), await replica(), await replica()];
    const onlyOneEach = (mine: ((address: string) => boolean)[]) =>
      hosts.slice(0, 300).every((host) => mine.filter((m) => m(host)).length === 1);
    await settled([a, b, c], onlyOneEach);
    await b.close();
    await settled([a, c], onlyOneEach);
    await a.close();
    await c.close();
  });

  it("check every host while they cannot tell who else is live", async () => {
    const alone = new HostCheckShare(undefined);
    const mine = await alone.current();
    expect(hosts.every((host) => mine(host))).toBe(true);
  });
});
