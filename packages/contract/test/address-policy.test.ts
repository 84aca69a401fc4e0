import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { type Network, ProxyAddressPolicy, parseNetwork } from "../src/address-policy.ts";

const DEFAULT = new ProxyAddressPolicy([]);

function allowing(...networks: string[]): ProxyAddressPolicy {
  return new ProxyAddressPolicy(networks.map((text) => parseNetwork(text) as Network));
}

/** A resolver that answers every name with `addresses`, in that order. */
function resolvingTo(...addresses: string[]): ProxyAddressPolicy {
  const answer: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  return new ProxyAddressPolicy([], async () => answer);
}

describe("parseNetwork", () => {
  it.each([
    ["127.0.0.0/8", { address: "127.0.0.0", prefix: 8, family: "ipv4" }],
    ["10.1.2.3/32", { address: "10.1.2.3", prefix: 32, family: "ipv4" }],
    ["0.0.0.0/0", { address: "0.0.0.0", prefix: 0, family: "ipv4" }],
    ["fd00::/8", { address: "fd00::", prefix: 8, family: "ipv6" }],
    ["::1/128", { address: "::1", prefix: 128, family: "ipv6" }],
    ["::ffff:127.0.0.0/104", { address: "::ffff:127.0.0.0", prefix: 104, family: "ipv6" }],
  ])("reads %s", (text, network) => {
    expect(parseNetwork(text)).toEqual(network);
  });

  it("takes a bare address for the network of that one address", () => {
    expect(parseNetwork("192.0.2.7")).toEqual({ address: "192.0.2.7", prefix: 32, family: "ipv4" });
    expect(parseNetwork("2001:db8::7")).toEqual({ address: "2001:db8::7", prefix: 128, family: "ipv6" });
  });

  it.each([
    "127.0.0.0/33",
    "fd00::/129",
    "127.0.0.0/",
    "127.0.0.0/-1",
    "127.0.0.0/8/8",
    "127.0.0.0/0x8",
    "127.0.0/8",
    "256.0.0.0/8",
    "localhost/8",
    "fe80::%eth0/10",
    "[::1]/128",
    "",
  ])("refuses %j", (text) => {
    expect(parseNetwork(text)).toBeUndefined();
  });
});

describe("ProxyAddressPolicy.refusalOf, by default", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["FE80::a:b", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["ff02::1", "multicast"],
  ])("refuses %s as %s", (address, category) => {
    expect(DEFAULT.refusalOf(address)).toBe(category);
  });

  it.each([
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["0:0:0:0:0:ffff:7f00:1", "loopback"],
    ["::FFFF:127.1.2.3", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["::ffff:224.0.0.1", "multicast"],
  ])("refuses the IPv4-mapped IPv6 address %s as %s, as its IPv4 form", (address, category) => {
    expect(DEFAULT.refusalOf(address)).toBe(category);
  });

  it.each([
    "198.51.100.23",
    "10.0.0.1",
    "192.168.1.1",
    "128.0.0.1",
    "169.255.0.1",
    "2001:db8::1",
    "fec0::1",
    "::ffff:8.8.8.8",
  ])("allows %s", (address) => {
    expect(DEFAULT.refusalOf(address)).toBeUndefined();
  });
});

describe("ProxyAddressPolicy.refusalOf, with allowed networks", () => {
  it("allows what an allowed network holds, in either IPv4 form", () => {
    const policy = allowing("127.0.0.0/8");
    expect(policy.refusalOf("127.0.0.1")).toBeUndefined();
    expect(policy.refusalOf("127.9.9.9")).toBeUndefined();
    expect(policy.refusalOf("::ffff:127.0.0.1")).toBeUndefined();
  });

  it("still refuses what the allowed networks do not hold", () => {
    const policy = allowing("127.0.0.0/8");
    expect(policy.refusalOf("::1")).toBe("loopback");
    expect(policy.refusalOf("169.254.169.254")).toBe("link-local");
  });

  it("allows IPv6 networks and single addresses", () => {
    const policy = allowing("::1/128", "169.254.10.0/24");
    expect(policy.refusalOf("::1")).toBeUndefined();
    expect(policy.refusalOf("169.254.10.20")).toBeUndefined();
    expect(policy.refusalOf("169.254.169.254")).toBe("link-local");
  });
});

describe("ProxyAddressPolicy.decide", () => {
  it("answers the address a name resolved to", async () => {
    expect(await resolvingTo("198.51.100.7", "2001:db8::7").decide("proxy.example")).toEqual({
      allowed: true,
      address: "198.51.100.7",
    });
  });

  it("refuses a name of which any address is refused, whatever the order", async () => {
    for (const policy of [resolvingTo("198.51.100.7", "127.0.0.1"), resolvingTo("127.0.0.1", "198.51.100.7")]) {
      expect(await policy.decide("proxy.example")).toEqual({
        allowed: false,
        message: "the proxy's address is not allowed: loopback; see PROXY_ALLOWED_NETWORKS",
      });
    }
  });

  it("never names the addresses it refused", async () => {
    const decision = await resolvingTo("169.254.169.254").decide("metadata.example");
    expect(decision).toEqual({
      allowed: false,
      message: "the proxy's address is not allowed: link-local; see PROXY_ALLOWED_NETWORKS",
    });
  });

  it("resolves localhost with the system resolver and refuses it", async () => {
    expect(await DEFAULT.decide("localhost")).toMatchObject({
      allowed: false,
      message: expect.stringContaining("loopback"),
    });
  });

  it("rejects as the lookup does for a name that does not resolve", async () => {
    await expect(DEFAULT.decide("no-such-host.invalid")).rejects.toThrow(/ENOTFOUND|EAI_AGAIN/);
  });
});
