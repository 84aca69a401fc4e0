import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedFleet } from "../../../../bench/lib/fleet.ts";
import { freshStore } from "../../../../test/support/stores.ts";
import { SessionLifecycle } from "../../src/browsers/session-lifecycle.ts";
import { checkAllHosts, type HostCheckDeps } from "../../src/hosts/check-host.ts";
import { HostPool } from "../../src/hosts/host-pool.ts";
import { LivenessProbes } from "../../src/hosts/liveness-probes.ts";

const PROBES = { intervalMs: 100, lostAfterMs: 400 };
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A gateway's host checks (no HTTP) on a fresh SQLite store, against `hosts` simulated agents. */
async function checkedFleet(hostCount: number) {
  const fleet = await SimulatedFleet.start(hostCount);
  cleanups.push(() => fleet.stop());
  const { store, dispose } = await freshStore("sqlite");
  cleanups.push(dispose);
  for (const address of fleet.addresses) await store.hosts.register(address, new Date().toISOString());
  const hosts = new HostPool(undefined);
  const probes = new LivenessProbes(PROBES);
  const lifecycle = new SessionLifecycle({ store, hosts, agentTimeoutMs: 2_000, logger: pino({ level: "silent" }) });
  cleanups.push(() => hosts.close());
  cleanups.push(() => probes.close());
  cleanups.push(() => lifecycle.close());
  const deps: HostCheckDeps = { store, hosts, lifecycle, timeoutMs: 2_000, probes, describedAt: new Map() };
  return { fleet, store, hosts, deps };
}

describe("a gateway checking a fleet of idle hosts that answer liveness probes", () => {
  it("holds no connection to any of them once checked, round after round", async () => {
    const { fleet, store, hosts, deps } = await checkedFleet(20);
    await checkAllHosts(deps);
    const healths = await Promise.all(fleet.addresses.map(async (a) => (await store.hosts.find(a))?.health));
    expect(healths).toEqual(fleet.addresses.map(() => "serving"));
    expect(hosts.openChannels).toBe(0);
    await sleep(300);
    await checkAllHosts(deps);
    expect(hosts.openChannels).toBe(0);
  });

  it("takes a host whose agent died out of the pool within the probes' silence, with no round run", async () => {
    const { fleet, store, deps } = await checkedFleet(10);
    await checkAllHosts(deps);
    const [victim, ...others] = fleet.addresses as [string, ...string[]];
    await fleet.kill(victim);
    const killedAt = performance.now();
    while ((await store.hosts.find(victim))?.health === "serving" && performance.now() - killedAt < 5_000) {
      await sleep(25);
    }
    expect((await store.hosts.find(victim))?.health).toBe("unreachable");
    expect(performance.now() - killedAt).toBeLessThan(PROBES.lostAfterMs + 1_500);
    for (const address of others) expect((await store.hosts.find(address))?.health).toBe("serving");
  });
});
