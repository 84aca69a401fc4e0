import type { LookupAddress, LookupOptions } from "node:dns";
import https from "node:https";
import { isIP } from "node:net";
import { rootCertificates } from "node:tls";
import { type Network, ProxyAddressPolicy, type ProxyRoute, parseNetwork } from "@browser-infra/contract";
import { type PrepareRequestFunctionResult, RequestError, Server } from "proxy-chain";
import type { Logger } from "../logger.ts";
import { matchesBypass } from "./bypass.ts";

/** What the relay does with the running session's traffic. */
type Routing =
  | { kind: "none" }
  | { kind: "direct" }
  | {
      kind: "upstream";
      /** The proxy's URL with its credentials: never logged. */
      url: string;
      host: string;
      bypassHosts: readonly string[];
      policy: ProxyAddressPolicy;
      /** Trusts the route's CA bundle besides the public roots, for an https proxy's own certificate. */
      httpsAgent: https.Agent | undefined;
    };

/** Status of every refusal the relay itself makes: the browser shows a proxy error, never a page. */
const BAD_GATEWAY = 502;

function hostInUrl(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

export function upstreamUrl(route: ProxyRoute): string {
  const credentials =
    route.username || route.password
      ? `${encodeURIComponent(route.username)}:${encodeURIComponent(route.password)}@`
      : "";
  return `${route.protocol}://${credentials}${hostInUrl(route.host)}:${route.port}`;
}

/**
 * A dns.lookup that answers with the one address the policy approved, whatever the name: the
 * connection goes where the decision was made, and a second DNS answer (rebinding) is never asked for.
 */
function fixedLookup(address: string): typeof import("node:dns").lookup {
  const family = isIP(address);
  const lookup = (
    _hostname: string,
    options: LookupOptions | number | ((...args: never[]) => void),
    callback?: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    const done = (typeof options === "function" ? options : callback) as NonNullable<typeof callback>;
    // Node's net.connect asks for every address (autoSelectFamily) and gets the checked one.
    if (typeof options === "object" && options.all) done(null, [{ address, family }]);
    else done(null, address, family);
  };
  return lookup as unknown as typeof import("node:dns").lookup;
}

/**
 * The agent's one local HTTP proxy, which every browser it launches is pointed at
 * (`--proxy-server`): Chromium never learns the session's real proxy nor its credentials. Its routing
 * belongs to the running session: set when the session starts (through its proxy, or direct), and
 * cleared by the session's fence, which also cuts every connection the session had open. With no
 * session (a warm spare waiting) it refuses everything.
 */
export class ProxyRelay {
  readonly #server: Server;
  readonly #logger: Logger;
  #routing: Routing = { kind: "none" };

  private constructor(server: Server, logger: Logger) {
    this.#server = server;
    this.#logger = logger;
  }

  /** Listens on a free loopback port. */
  static async start(logger: Logger): Promise<ProxyRelay> {
    let relay: ProxyRelay | undefined;
    const server = new Server({
      host: "127.0.0.1",
      port: 0,
      verbose: false,
      prepareRequestFunction: ({ hostname }) => (relay as ProxyRelay).#prepare(hostname),
    });
    relay = new ProxyRelay(server, logger.child({ component: "proxy-relay" }));
    server.on("requestFailed", ({ error }: { error: Error }) =>
      relay.#logger.warn({ err: error }, "the relay failed a request"),
    );
    await server.listen();
    return relay;
  }

  get port(): number {
    return this.#server.port;
  }

  /** The running session's traffic goes through `route` from now on; undefined: straight to the sites. */
  use(route: ProxyRoute | undefined): void {
    if (!route) {
      this.#routing = { kind: "direct" };
      return;
    }
    const allowed = route.allowedNetworks.map((text) => parseNetwork(text)).filter((n): n is Network => !!n);
    this.#routing = {
      kind: "upstream",
      url: upstreamUrl(route),
      host: route.host,
      bypassHosts: route.bypassHosts,
      policy: new ProxyAddressPolicy(allowed),
      httpsAgent:
        route.protocol === "https" && route.caBundle
          ? new https.Agent({ ca: [...rootCertificates, route.caBundle], keepAlive: false })
          : undefined,
    };
  }

  /** The session ended: refuse from now on, and cut every connection it had open. */
  clear(): void {
    const routing = this.#routing;
    this.#routing = { kind: "none" };
    if (routing.kind === "upstream") routing.httpsAgent?.destroy();
    this.#server.closeConnections();
  }

  async close(): Promise<void> {
    this.clear();
    await this.#server.close(true);
  }

  async #prepare(hostname: string): Promise<PrepareRequestFunctionResult> {
    const routing = this.#routing;
    if (routing.kind === "none") throw new RequestError("no browser session is running on this host", BAD_GATEWAY);
    if (routing.kind === "direct" || matchesBypass(hostname, routing.bypassHosts)) return {};
    let decision: Awaited<ReturnType<ProxyAddressPolicy["decide"]>>;
    try {
      decision = await routing.policy.decide(routing.host);
    } catch {
      throw new RequestError("the session's proxy could not be resolved", BAD_GATEWAY);
    }
    if (!decision.allowed) {
      this.#logger.warn({ reason: decision.message }, "refused to connect to the session's proxy");
      throw new RequestError(decision.message, BAD_GATEWAY);
    }
    return { upstreamProxyUrl: routing.url, dnsLookup: fixedLookup(decision.address), httpsAgent: routing.httpsAgent };
  }
}
