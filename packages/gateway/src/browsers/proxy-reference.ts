import type { Principal } from "../auth/api-keys.ts";
import { ApiError, invalidInput } from "../errors.ts";
import type { ProxyRecord } from "../store/proxies.ts";
import type { Store } from "../store/store.ts";

const PAGE = 100;

async function proxyIdsNamed(store: Store, organizationId: string, name: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += PAGE) {
    // The list filter folds case; a reference names a proxy exactly.
    const page = await store.proxies.list(organizationId, { name, offset, limit: PAGE });
    ids.push(...page.items.filter((proxy) => proxy.name === name).map((proxy) => proxy.id));
    if (!page.hasMore) return ids;
  }
}

/**
 * The organization's proxy that `proxy_id` refers to: the proxy with that id, else the one proxy
 * with that name. Names are not unique (spec 4.1 rule 3), so a name shared by several
 * proxies is refused with their ids, for the caller to pick one.
 */
export async function resolveProxyReference(
  store: Store,
  principal: Principal,
  reference: string,
): Promise<ProxyRecord> {
  const org = principal.organizationId;
  const byId = await store.proxies.findActive(org, reference);
  if (byId) return byId;
  const ids = await proxyIdsNamed(store, org, reference);
  // Deleted since it was listed: as if it had never been named so.
  const named = ids.length === 1 ? await store.proxies.findActive(org, ids[0] as string) : undefined;
  if (named) return named;
  if (ids.length <= 1) throw invalidInput([`proxy_id: no proxy has the id or name "${reference}"`]);
  throw new ApiError("bad_request", `proxy_id: ${ids.length} proxies are named "${reference}"; give one of their ids`, {
    details: ids.map((id) => ({ code: "invalid_input", message: `proxy_id: "${reference}" names proxy ${id}` })),
  });
}
