import { execFileSync } from "node:child_process";

/**
 * Two network namespaces made for one test, joined by a veth pair with a private /30 that exists only inside
 * them: nothing in the machine's own namespace can route to it, and nothing in them can route out. Needs root
 * and Debian's iproute2 (`ip`); .ci/run installs it.
 */
export interface NamespacePair {
  /** Namespace names, for `ip netns exec`. */
  readonly a: string;
  readonly b: string;
  /** Each side's address on the link. */
  readonly addressA: string;
  readonly addressB: string;
  /** Argument vector prefix that runs a command inside a namespace. */
  exec(namespace: string): string[];
  /** Takes B's end of the link down: packets from A are dropped silently, as in a partition. */
  linkDown(): void;
  linkUp(): void;
  /** Deletes both namespaces, and with them the link; safe to call twice. */
  destroy(): void;
}

function ip(...args: string[]): string {
  try {
    return execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const { stderr, code } = error as { stderr?: string; code?: string };
    if (code === "ENOENT") throw new Error("`ip` is missing: install Debian's iproute2 (apt-get install iproute2)");
    throw new Error(`ip ${args.join(" ")}: ${stderr ?? error}`);
  }
}

/** Namespaces left by an earlier run of this prefix whose process is gone (killed before its clean-up ran). */
function removeStale(prefix: string): void {
  for (const line of ip("netns", "list").split("\n")) {
    const match = new RegExp(`^(${prefix}[ab]-(\\d+))\\b`).exec(line);
    if (!match || Number(match[2]) === process.pid) continue;
    try {
      process.kill(Number(match[2]), 0);
    } catch {
      try {
        ip("netns", "del", match[1] as string);
      } catch {}
    }
  }
}

export function createNamespacePair(options: { prefix: string; subnet: string }): NamespacePair {
  const suffix = `${process.pid}`;
  const a = `${options.prefix}a-${suffix}`;
  const b = `${options.prefix}b-${suffix}`;
  // Interface names live inside the namespaces, so they need not be unique on the machine.
  const [first, second] = ["veth-a", "veth-b"];
  const addressA = `${options.subnet}.1`;
  const addressB = `${options.subnet}.2`;
  const destroy = () => {
    for (const namespace of [a, b]) {
      try {
        ip("netns", "del", namespace);
      } catch {}
    }
  };
  destroy();
  removeStale(options.prefix);
  try {
    ip("netns", "add", a);
    ip("netns", "add", b);
    // Created directly inside the namespaces: the link never appears in the machine's own namespace.
    ip("link", "add", first, "netns", a, "type", "veth", "peer", "name", second, "netns", b);
    ip("-n", a, "addr", "add", `${addressA}/30`, "dev", first);
    ip("-n", b, "addr", "add", `${addressB}/30`, "dev", second);
    for (const [namespace, device] of [
      [a, first],
      [b, second],
    ] as const) {
      ip("-n", namespace, "link", "set", "lo", "up");
      ip("-n", namespace, "link", "set", device, "up");
    }
  } catch (error) {
    destroy();
    throw error;
  }
  return {
    a,
    b,
    addressA,
    addressB,
    exec: (namespace) => ["ip", "netns", "exec", namespace],
    linkDown: () => {
      ip("-n", b, "link", "set", second, "down");
    },
    linkUp: () => {
      ip("-n", b, "link", "set", second, "up");
    },
    destroy,
  };
}
