import { promises as dns, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

/** dns.promises.lookup with `all`, or a test's stand-in. */
export type Lookup = (name: string, options: { all: true }) => Promise<LookupAddress[]>;

/** An IP network, as PROXY_ALLOWED_NETWORKS lists them. */
export interface Network {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

/** "address/prefix", IPv4 or IPv6; a bare address is the network of that one address. Undefined when it is neither. */
export function parseNetwork(text: string): Network | undefined {
  const [address = "", prefixText, ...rest] = text.split("/");
  const version = isIP(address);
  // A zone (fe80::1%eth0) names an interface, not a network.
  if (version === 0 || address.includes("%") || rest.length > 0) return undefined;
  const bits = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

function blockList(networks: readonly Network[]): BlockList {
  const list = new BlockList();
  for (const { address, prefix, family } of networks) list.addSubnet(address, prefix, family);
  return list;
}

function networks(...texts: string[]): Network[] {
  return texts.map((text) => parseNetwork(text) as Network);
}

/**
 * Where the service must not connect on a tenant's behalf (a proxy check in the gateway, a session's
 * relay to its upstream proxy in the host agent) unless the operator allows it: this machine's own
 * services, a cloud metadata service (169.254.169.254), and addresses that are no single host.
 * BlockList also matches the IPv4-mapped IPv6 form (::ffff:127.0.0.1) of an IPv4 network.
 */
const REFUSED: [category: string, list: BlockList][] = [
  ["loopback", blockList(networks("127.0.0.0/8", "::1/128"))],
  ["link-local", blockList(networks("169.254.0.0/16", "fe80::/10"))],
  // Linux dials 0.0.0.0 as this machine, and :: as ::1; the rest of 0.0.0.0/8 means "this network".
  ["unspecified", blockList(networks("0.0.0.0/8", "::/128"))],
  ["multicast", blockList(networks("224.0.0.0/4", "ff00::/8"))],
];

export type AddressDecision = { allowed: true; address: string } | { allowed: false; message: string };

/** Which addresses a tenant's proxy may be reached at: see PROXY_ALLOWED_NETWORKS in the README. */
export class ProxyAddressPolicy {
  readonly #allowed: BlockList;
  readonly #lookup: Lookup;

  /** `allowed` wins over the refused categories; `lookup` is dns.promises.lookup unless a test replaces it. */
  constructor(allowed: readonly Network[], lookup: Lookup = dns.lookup) {
    this.#allowed = blockList(allowed);
    this.#lookup = lookup;
  }

  /** The refused category `address` (an IP address) is in, or undefined when it may be dialled. */
  refusalOf(address: string): string | undefined {
    // The zone of a link-local address names the interface; BlockList matches no address that has one.
    const bare = address.replace(/%.*$/, "");
    const family = isIP(bare) === 4 ? "ipv4" : "ipv6";
    if (this.#allowed.check(bare, family)) return undefined;
    return REFUSED.find(([, list]) => list.check(bare, family))?.[0];
  }

  /**
   * Resolves `host` once and decides on what it resolved to; the caller dials the address given,
   * never the name again, so a second answer (DNS rebinding) cannot slip past the decision.
   * One refused address refuses the name: the verdict then does not hang on which address
   * the resolver happens to list first. The message names the category, not the addresses.
   * A failed lookup rejects, as dns.lookup does.
   */
  async decide(host: string): Promise<AddressDecision> {
    const addresses = (await this.#lookup(host, { all: true })).map((entry) => entry.address);
    for (const address of addresses) {
      const category = this.refusalOf(address);
      if (category) {
        return {
          allowed: false,
          message: `the proxy's address is not allowed: ${category}; see PROXY_ALLOWED_NETWORKS`,
        };
      }
    }
    const [first] = addresses;
    if (first === undefined) throw new Error(`${host} resolved to no address`);
    return { allowed: true, address: first };
  }
}
