import { randomUUID } from "node:crypto";
import type { ProxyAddressPolicy } from "@browser-infra/contract";
import type { Principal } from "../auth/api-keys.ts";
import { notFound } from "../errors.ts";
import type { ProxyCheckLimits } from "./check-limits.ts";
import { type EndpointDeps, proxyEndpoint } from "./endpoint.ts";
import { probeProxy } from "./probe.ts";
import { findProxy, type ProxyDeps } from "./proxies.ts";
import { type ProxyJson, toProxyJson } from "./proxy-json.ts";
import type { CheckProxyRequest } from "./schemas.ts";

export const CHECK_TIMEOUT_MS = 10_000;

export interface CheckDeps extends ProxyDeps, EndpointDeps {
  checkLimits: ProxyCheckLimits;
  /** Where a check may connect (PROXY_ALLOWED_NETWORKS). */
  addressPolicy: ProxyAddressPolicy;
}

export interface CheckResult {
  /** The proxy as stored after the check, except that `status` is this check's outcome. */
  proxy: ProxyJson;
  /** Why the proxy is or is not available, in words. */
  message: string;
}

/**
 * Health check. Its status becomes the proxy's status only when it ran against
 * the default target: with a caller's url a failure may be the site's, not the
 * proxy's. last_checked and what the check learned of the IP address are kept either way.
 * A check the organization's limits refuse connects nowhere, nor does one of a proxy whose
 * host resolves to an address the address policy refuses: that proxy is reported unavailable.
 */
export async function checkProxy(
  deps: CheckDeps,
  principal: Principal,
  id: string,
  request: CheckProxyRequest,
): Promise<CheckResult> {
  const proxy = await findProxy(deps.store, principal, id);
  const target = new URL(request.url ?? deps.proxyCheckUrl);
  const end = deps.checkLimits.begin(principal.organizationId);
  try {
    // A check is no session: a provider's sticky-session id gets one of its own.
    const route = proxyEndpoint(deps, proxy, `check-${randomUUID()}`);
    const outcome =
      "endpoint" in route
        ? await probeProxy(route.endpoint, target, {
            timeoutMs: CHECK_TIMEOUT_MS,
            targetEchoesIp: request.url === undefined,
            addresses: deps.addressPolicy,
          })
        : { available: false, message: route.unavailable };
    const status = outcome.available ? "available" : "unavailable";
    const saved = await deps.store.proxies.recordCheck(principal.organizationId, id, {
      status: request.url === undefined ? status : undefined,
      ipAddress: outcome.ipAddress,
      checkedAt: new Date().toISOString(),
    });
    // Deleted while the check ran.
    if (!saved) throw notFound(`proxy "${id}"`);
    return { proxy: { ...toProxyJson(saved), status }, message: outcome.message };
  } finally {
    end();
  }
}
