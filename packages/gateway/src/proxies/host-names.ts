import { isIP } from "node:net";

export const MAX_HOST_NAME_LENGTH = 253;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** An RFC 1123 host name; a numeric last label is refused so that a malformed IPv4 address is not taken for a name. */
function isHostName(text: string): boolean {
  if (text.length === 0 || text.length > MAX_HOST_NAME_LENGTH) return false;
  const labels = text.split(".");
  return labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels.at(-1) as string);
}

function hasScheme(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

function unbracketed(text: string): string {
  return text.replace(/^\[(.*)\]$/, "$1");
}

/** Why `host` cannot be a custom proxy's address (a host name or an IP address), or undefined when it can. */
export function proxyHostProblem(host: string): string | undefined {
  if (isIP(host) || isHostName(host)) return undefined;
  if (hasScheme(host)) return "must be a host name or IP address, without a scheme";
  if (isIP(unbracketed(host))) return "must be an IPv6 address without brackets";
  const withPort = /^(.*):\d+$/.exec(host);
  if (withPort) {
    const bare = unbracketed(withPort[1] as string);
    if (isIP(bare) || isHostName(bare)) return "must not include a port; give the port in config.port";
  }
  if (host.length > MAX_HOST_NAME_LENGTH) return `must be at most ${MAX_HOST_NAME_LENGTH} characters`;
  return "must be a host name or IP address";
}

/** Why `entry` cannot be a bypass host (a host name or a *.domain wildcard), or undefined when it can. */
export function bypassHostProblem(entry: string): string | undefined {
  if (entry.length > MAX_HOST_NAME_LENGTH) return `must be at most ${MAX_HOST_NAME_LENGTH} characters`;
  if (hasScheme(entry)) return "must be a host name without a scheme";
  if (isIP(unbracketed(entry))) return "must be a host name, not an IP address";
  if (/:\d+$/.test(entry)) return "must be a host name without a port";
  const name = entry.startsWith("*.") ? entry.slice(2) : entry;
  if (!isHostName(name)) return "must be a host name such as example.com or a wildcard such as *.example.com";
  return undefined;
}
