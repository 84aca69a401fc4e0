import type { ProxyType } from "../store/proxies.ts";
import type { ProxyEndpoint } from "./probe.ts";

export const MANAGED_PROXY_TYPES = ["datacenter", "isp", "residential", "mobile"] as const satisfies ProxyType[];
export type ManagedProxyType = (typeof MANAGED_PROXY_TYPES)[number];

/** The operator's upstream URL template for each managed proxy type; a type without one cannot be used. */
export type ProxyUrlTemplates = Partial<Record<ManagedProxyType, string>>;

/** The environment variable that sets a managed type's template: what a refusal tells the operator to set. */
export function templateVariable(type: ManagedProxyType): string {
  return `PROXY_URL_TEMPLATE_${type.toUpperCase()}`;
}

/**
 * Placeholders a template may hold: the proxy's own config fields, and `{session}`, an id that
 * stays the same for one browser session (a provider's sticky-session id) and differs between them.
 */
export const TEMPLATE_PLACEHOLDERS = ["country", "city", "state", "zip", "asn", "session"] as const;
type Placeholder = (typeof TEMPLATE_PLACEHOLDERS)[number];

const PLACEHOLDER = /\{([a-z_]+)\}/g;

/**
 * Why `template` cannot be a template, or undefined when it can: it must be an http(s) URL with a
 * host once its placeholders are filled in, and use only known placeholders. Never says what the
 * template holds (it carries the provider's credentials).
 */
export function templateProblem(template: string): string | undefined {
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (!(TEMPLATE_PLACEHOLDERS as readonly string[]).includes(name as string)) {
      return `has an unknown placeholder {${name}}; known: ${TEMPLATE_PLACEHOLDERS.map((p) => `{${p}}`).join(" ")}`;
    }
  }
  let url: URL;
  try {
    url = new URL(template.replace(PLACEHOLDER, "x"));
  } catch {
    return "is not a URL such as http://user-{session}:password@proxy.example.com:8000";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http:// or https:// URL";
  if (url.hostname === "") return "must name the proxy's host";
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") return "must be the proxy's origin only";
  return undefined;
}

/**
 * The upstream a managed proxy routes through: its type's template with the placeholders filled in
 * from the proxy's config (empty where the config has no such field), each value percent-encoded so
 * it can never change the URL's structure. The template was checked at start (templateProblem).
 */
export function expandTemplate(template: string, config: Record<string, unknown>, session: string): ProxyEndpoint {
  const values: Record<Placeholder, string> = {
    country: String(config.country ?? ""),
    city: String(config.city ?? ""),
    state: String(config.state ?? ""),
    zip: String(config.zip ?? ""),
    asn: String(config.asn ?? ""),
    session,
  };
  const url = new URL(
    template.replace(PLACEHOLDER, (_match, name: string) => encodeURIComponent(values[name as Placeholder])),
  );
  const protocol = url.protocol === "https:" ? "https" : "http";
  return {
    protocol,
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? (protocol === "https" ? 443 : 80) : Number(url.port),
    username: url.username === "" ? undefined : decodeURIComponent(url.username),
    password: url.password === "" ? undefined : decodeURIComponent(url.password),
  };
}
