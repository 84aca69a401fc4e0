import type { ProxyAddressPolicy } from "@browser-infra/contract";
import type { Principal } from "../auth/api-keys.ts";
import { ApiError, notFound } from "../errors.ts";
import type { ProxyRecord } from "../store/proxies.ts";
import type { ProxyCheckLimits } from "./check-limits.ts";
import { type ProbeOutcome, type ProxyEndpoint, probeProxy } from "./probe.ts";
import { findProxy, type ProxyDeps, type SecretField, secretContext } from "./proxies.ts";
import { type ProxyJson, toProxyJson } from "./proxy-json.ts";
import type { CheckProxyRequest } from "./schemas.ts";
import { openSecret } from "./secret-box.ts";

export const CHECK_TIMEOUT_MS = 10_000;

export interface CheckDeps extends ProxyDeps {
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

function openField(deps: ProxyDeps, proxy: ProxyRecord, field: SecretField, sealed: string | null): string | undefined {
  if (sealed === null) return undefined;
  try {
    return openSecret(deps.secretsKey, sealed, secretContext(proxy.id, field));
  } catch (error) {
    // Not the proxy's fault, so not reported as "unavailable": the operator has to restore the key.
    throw new ApiError("internal_error", "internal error", {
      cause: new Error(`cannot open the ${field} of proxy ${proxy.id}: was SECRETS_KEY changed?`, { cause: error }),
    });
  }
}

function endpointOf(deps: ProxyDeps, proxy: ProxyRecord): ProxyEndpoint {
  const config = proxy.config as { host: string; port: number; username?: string };
  return {
    host: config.host,
    port: config.port,
    protocol: proxy.protocol,
    username: config.username,
    password: openField(deps, proxy, "password", proxy.passwordSealed),
    caBundle: openField(deps, proxy, "ca_bundle", proxy.caBundleSealed),
  };
}

/** Managed proxy types route through an upstream provider, and this deployment has none to ask. */
function managedOutcome(proxy: ProxyRecord): ProbeOutcome {
  return {
    available: false,
    message: `no upstream provider for ${proxy.type} proxies is configured on this gateway, so it cannot route through one; only custom proxies can be checked`,
  };
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
    const outcome =
      proxy.type === "custom"
        ? await probeProxy(endpointOf(deps, proxy), target, {
            timeoutMs: CHECK_TIMEOUT_MS,
            targetEchoesIp: request.url === undefined,
            addresses: deps.addressPolicy,
          })
        : managedOutcome(proxy);
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
