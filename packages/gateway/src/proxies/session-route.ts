import type { Network, ProxyRouteSchema } from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ApiError } from "../errors.ts";
import type { ProxyRecord } from "../store/proxies.ts";
import { type EndpointDeps, proxyEndpoint } from "./endpoint.ts";

export interface SessionRouteDeps extends EndpointDeps {
  /** PROXY_ALLOWED_NETWORKS: the agent's relay applies the same address policy as the checks. */
  proxyAllowedNetworks: readonly Network[];
}

/**
 * What the session's host agent needs to send the browser's traffic through `proxy`: the upstream,
 * its secrets opened (they travel only in the StartSession call, never into a log), the bypass
 * hosts and the address policy. A proxy with no upstream (a managed type without a template) is
 * refused before any host is taken: nothing is ever routed directly in place of a proxy asked for.
 */
export function sessionProxyRoute(
  deps: SessionRouteDeps,
  proxy: ProxyRecord,
  sessionId: string,
): MessageInitShape<typeof ProxyRouteSchema> {
  const outcome = proxyEndpoint(deps, proxy, sessionId);
  if ("unavailable" in outcome) {
    throw new ApiError("bad_request", `proxy_id: proxy ${proxy.id} cannot be used: ${outcome.unavailable}`);
  }
  const { endpoint } = outcome;
  return {
    protocol: endpoint.protocol,
    host: endpoint.host,
    port: endpoint.port,
    username: endpoint.username ?? "",
    password: endpoint.password ?? "",
    caBundle: endpoint.caBundle ?? "",
    bypassHosts: proxy.bypassHosts,
    allowedNetworks: deps.proxyAllowedNetworks.map((network) => `${network.address}/${network.prefix}`),
  };
}
