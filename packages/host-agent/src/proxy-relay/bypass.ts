/**
 * Whether a request for `hostname` skips the session's proxy. Bypass entries are host names (the
 * gateway refuses IP addresses): one names the host exactly, case folded; "*.example.com" covers
 * every name under example.com but not example.com itself, as Chromium's own bypass rules read it.
 */
export function matchesBypass(hostname: string, bypassHosts: readonly string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return bypassHosts.some((entry) => {
    const rule = entry.toLowerCase();
    return rule.startsWith("*.") ? host.endsWith(rule.slice(1)) : host === rule;
  });
}
