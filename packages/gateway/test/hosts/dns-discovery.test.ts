import type { LookupAddress } from "node:dns";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freshStore } from "../../../../test/support/stores.ts";
import { type DiscoveryDeps, discover, type Lookup, startDnsDiscovery } from "../../src/hosts/dns-discovery.ts";
import type { HostDescription, HostHealth } from "../../src/store/hosts.ts";
import { newId } from "../../src/store/ids.ts";
import type { Store } from "../../src/store/store.ts";

const PORT = 50051;

/** A resolver that answers what `answer` holds at the time of the call; an Error is thrown. */
function fakeLookup(answer: { current: string[] | Error }): Lookup & { names: string[] } {
  const names: string[] = [];
  const lookup = async (name: string): Promise<LookupAddress[]> => {
    names.push(name);
    if (answer.current instanceof Error) throw answer.current;
    return answer.current.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { names });
}

function enotfound(name: string): Error {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
}

describe("HOST_AGENTS_DNS discovery", () => {
  let store: Store;
  let dispose: () => Promise<void>;
  let answer: { current: string[] | Error };
  let deps: DiscoveryDeps;

  beforeEach(async () => {
    ({ store, dispose } = await freshStore("sqlite"));
    answer = { current: [] };
    deps = { store, lookup: fakeLookup(answer) };
  });

  afterEach(async () => {
    await dispose();
  });

  const addresses = async () => (await store.hosts.list()).map((host) => host.address);

  async function check(address: string, health: Exclude<HostHealth, "unknown">): Promise<void> {
    await store.hosts.recordCheck(address, {
      health,
      detail: health === "serving" ? null : "test",
      checkedAt: new Date().toISOString(),
      description:
        health === "serving"
          ? ({ agentVersion: "1", display: ":1", screenWidth: 1920, screenHeight: 1080 } as HostDescription)
          : undefined,
    });
  }

  /**
   * Gives the host a session, then marks it as `health`. The session row itself is left out (the
   * foreign key is turned off on this connection): only the host's side matters to discovery.
   */
  async function hold(address: string, health: Exclude<HostHealth, "unknown">): Promise<void> {
    await store.sql.execute("PRAGMA foreign_keys = OFF");
    expect(await store.hosts.assign(address, newId())).toBe(true);
    await check(address, health);
  }

  it("registers every A and AAAA address at the port, an IPv6 one in brackets, each once", async () => {
    answer.current = ["10.0.0.7", "fd00::7", "10.0.0.7", "10.0.0.6"];
    const result = await discover(deps, "browser-host", PORT);
    expect(result).toEqual({
      resolved: true,
      addresses: ["10.0.0.6:50051", "10.0.0.7:50051", "[fd00::7]:50051"],
      registered: ["10.0.0.6:50051", "10.0.0.7:50051", "[fd00::7]:50051"],
      removed: [],
    });
    expect(await addresses()).toEqual(["10.0.0.6:50051", "10.0.0.7:50051", "[fd00::7]:50051"]);
    expect((await store.hosts.find("10.0.0.6:50051"))?.health).toBe("unknown");
  });

  it("asks the resolver for every address of the name", async () => {
    const calls: unknown[] = [];
    const lookup: Lookup = async (name, options) => {
      calls.push([name, options]);
      return [];
    };
    await discover({ store, lookup }, "browser-host", PORT);
    expect(calls).toEqual([["browser-host", { all: true }]]);
  });

  it("leaves known hosts as they are when the answer does not change", async () => {
    answer.current = ["10.0.0.6"];
    await discover(deps, "browser-host", PORT);
    await check("10.0.0.6:50051", "serving");
    const again = await discover(deps, "browser-host", PORT);
    expect(again).toMatchObject({ resolved: true, registered: [], removed: [] });
    expect((await store.hosts.find("10.0.0.6:50051"))?.health).toBe("serving");
  });

  it("forgets an idle host that no longer resolves and is not serving", async () => {
    answer.current = ["10.0.0.6", "10.0.0.7", "fd00::7"];
    await discover(deps, "browser-host", PORT);
    await check("10.0.0.7:50051", "unreachable");
    await check("[fd00::7]:50051", "not_serving");
    answer.current = ["10.0.0.6", "10.0.0.8"];
    const result = await discover(deps, "browser-host", PORT);
    expect(result).toMatchObject({
      resolved: true,
      registered: ["10.0.0.8:50051"],
      removed: ["10.0.0.7:50051", "[fd00::7]:50051"],
    });
    expect(await addresses()).toEqual(["10.0.0.6:50051", "10.0.0.8:50051"]);
  });

  it("forgets a host never checked (health unknown) that no longer resolves", async () => {
    answer.current = ["10.0.0.7"];
    await discover(deps, "browser-host", PORT);
    answer.current = ["10.0.0.8"];
    expect(await discover(deps, "browser-host", PORT)).toMatchObject({ removed: ["10.0.0.7:50051"] });
  });

  it("keeps a host that no longer resolves while its last check found it serving", async () => {
    answer.current = ["10.0.0.7"];
    await discover(deps, "browser-host", PORT);
    await check("10.0.0.7:50051", "serving");
    answer.current = ["10.0.0.8"];
    expect(await discover(deps, "browser-host", PORT)).toMatchObject({ removed: [] });
    expect(await addresses()).toContain("10.0.0.7:50051");
    // Once a check finds it gone, the next round forgets it.
    await check("10.0.0.7:50051", "unreachable");
    expect(await discover(deps, "browser-host", PORT)).toMatchObject({ removed: ["10.0.0.7:50051"] });
  });

  it("keeps a host that holds a session, serving or not", async () => {
    answer.current = ["10.0.0.7"];
    await discover(deps, "browser-host", PORT);
    await hold("10.0.0.7:50051", "unreachable");
    answer.current = ["10.0.0.8"];
    expect(await discover(deps, "browser-host", PORT)).toMatchObject({ removed: [] });
    expect(await addresses()).toContain("10.0.0.7:50051");
  });

  it("never forgets hosts added another way: DNS names, other ports, HOST_AGENTS", async () => {
    const at = new Date().toISOString();
    const others = ["browser-host-1.internal:50051", "10.0.0.9:50052", "[fd00::9]:50052", "10.0.0.10:50051"];
    for (const address of others) {
      await store.hosts.register(address, at);
      await check(address, "unreachable");
    }
    answer.current = ["10.0.0.6"];
    const result = await discover({ ...deps, keep: ["10.0.0.10:50051"] }, "browser-host", PORT);
    expect(result).toMatchObject({ resolved: true, registered: ["10.0.0.6:50051"], removed: [] });
    expect(await addresses()).toEqual([...others, "10.0.0.6:50051"].sort());
  });

  it("changes nothing when the name does not resolve", async () => {
    answer.current = ["10.0.0.6", "10.0.0.7"];
    await discover(deps, "browser-host", PORT);
    await check("10.0.0.6:50051", "unreachable");
    await check("10.0.0.7:50051", "unreachable");
    answer.current = enotfound("browser-host");
    const result = await discover(deps, "browser-host", PORT);
    expect(result).toEqual({ resolved: false, error: answer.current });
    expect(await addresses()).toEqual(["10.0.0.6:50051", "10.0.0.7:50051"]);
  });

  it("changes nothing when the answer holds no address it can dial", async () => {
    answer.current = ["10.0.0.6"];
    await discover(deps, "browser-host", PORT);
    for (const current of [[], ["fe80::1%eth0"]]) {
      answer.current = current;
      const result = await discover(deps, "browser-host", PORT);
      expect(result.resolved).toBe(false);
      expect(await addresses()).toEqual(["10.0.0.6:50051"]);
    }
  });

  it("skips a scoped IPv6 address, which cannot be dialled as host:port", async () => {
    answer.current = ["fe80::1%eth0", "10.0.0.6"];
    expect(await discover(deps, "browser-host", PORT)).toMatchObject({ addresses: ["10.0.0.6:50051"] });
  });

  it("resolves localhost for real through dns.promises.lookup", async () => {
    const result = await discover({ store }, "localhost", PORT);
    if (!result.resolved) throw result.error;
    expect(result.addresses.length).toBeGreaterThan(0);
    for (const address of result.addresses) expect(["127.0.0.1:50051", "[::1]:50051"]).toContain(address);
    expect(await addresses()).toEqual(result.addresses);
  });

  describe("as a periodic task", () => {
    function captureLogger() {
      const lines: { level: number; msg: string; host?: string; name?: string }[] = [];
      const stream = new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
          done();
        },
      });
      return { logger: pino({ level: "info" }, stream), lines };
    }

    async function until(what: string, condition: () => Promise<boolean> | boolean): Promise<void> {
      const deadline = Date.now() + 5_000;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    it("registers before it resolves, re-resolves every interval, warns on failure, stops", async () => {
      const { logger, lines } = captureLogger();
      const lookup = fakeLookup(answer);
      answer.current = ["10.0.0.6"];
      const task = await startDnsDiscovery({ store, lookup }, { name: "browser-host", port: PORT }, 20, logger);
      try {
        expect(await addresses()).toEqual(["10.0.0.6:50051"]);
        expect(lines).toContainEqual(
          expect.objectContaining({ msg: "host agent discovered by DNS", host: "10.0.0.6:50051" }),
        );

        answer.current = enotfound("browser-host");
        await until("a failure is logged", () => lines.some((line) => line.level === 40));
        expect(lines.find((line) => line.level === 40)).toMatchObject({
          name: "browser-host",
          msg: "HOST_AGENTS_DNS did not resolve; hosts left as they are",
        });
        expect(await addresses()).toEqual(["10.0.0.6:50051"]);

        await check("10.0.0.6:50051", "unreachable");
        answer.current = ["10.0.0.7"];
        await until("the new answer is applied", async () => (await addresses()).join() === "10.0.0.7:50051");
        await until("the removal is logged", () =>
          lines.some((line) => line.msg === "host agent no longer in DNS; forgotten" && line.host === "10.0.0.6:50051"),
        );
      } finally {
        await task.stop();
      }
      const calls = lookup.names.length;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(lookup.names.length).toBe(calls);
      expect(new Set(lookup.names)).toEqual(new Set(["browser-host"]));
    });
  });
});
