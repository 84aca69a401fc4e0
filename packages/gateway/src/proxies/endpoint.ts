import { ApiError } from "../errors.ts";
import type { ProxyRecord } from "../store/proxies.ts";
import type { ProxyEndpoint } from "./probe.ts";
import { type ProxyDeps, type SecretField, secretContext } from "./proxies.ts";
import { openSecret } from "./secret-box.ts";
import { expandTemplate, type ProxyUrlTemplates, templateVariable } from "./url-templates.ts";

export interface EndpointDeps extends Pick<ProxyDeps, "secretsKey"> {
  /** The operator's upstream for each managed proxy type (PROXY_URL_TEMPLATE_<TYPE>). */
  proxyUrlTemplates: ProxyUrlTemplates;
}

function openField(
  deps: EndpointDeps,
  proxy: ProxyRecord,
  field: SecretField,
  sealed: string | null,
): string | undefined {
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

/**
 * Where a proxy's traffic goes, secrets opened: a custom proxy's own address, or a managed type's
 * template filled in with the proxy's config and `session` (see url-templates.ts). A managed type
 * without a template has no upstream: the reason says which setting the operator lacks.
 */
export function proxyEndpoint(
  deps: EndpointDeps,
  proxy: ProxyRecord,
  session: string,
): { endpoint: ProxyEndpoint } | { unavailable: string } {
  if (proxy.type === "custom") {
    const config = proxy.config as { host: string; port: number; username?: string };
    return {
      endpoint: {
        host: config.host,
        port: config.port,
        protocol: proxy.protocol,
        username: config.username,
        password: openField(deps, proxy, "password", proxy.passwordSealed),
        caBundle: openField(deps, proxy, "ca_bundle", proxy.caBundleSealed),
      },
    };
  }
  const template = deps.proxyUrlTemplates[proxy.type];
  if (template === undefined) {
    return {
      unavailable: `no upstream is configured for ${proxy.type} proxies on this gateway: the operator sets ${templateVariable(proxy.type)}`,
    };
  }
  return { endpoint: expandTemplate(template, proxy.config, session) };
}
