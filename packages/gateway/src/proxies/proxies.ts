import type { Principal } from "../auth/api-keys.ts";
import { notFound } from "../errors.ts";
import { type Page, pageOf } from "../http/pagination.ts";
import { newId } from "../store/ids.ts";
import type { ProxyRecord } from "../store/proxies.ts";
import type { Store } from "../store/store.ts";
import { type ProxyJson, toProxyJson } from "./proxy-json.ts";
import type { CreateProxyRequest, ListProxiesQuery } from "./schemas.ts";
import { sealSecret } from "./secret-box.ts";

export interface ProxyDeps {
  store: Store;
  /** Seals custom proxy secrets at rest (see secrets-key.ts). */
  secretsKey: Buffer;
  /** What a health check requests through a proxy when the caller names no url. */
  proxyCheckUrl: string;
}

export type SecretField = "password" | "ca_bundle";

/** Binds a sealed secret to its proxy and field, so it cannot be replayed into another row. */
export function secretContext(proxyId: string, field: SecretField): string {
  return `proxy:${proxyId}:${field}`;
}

/** The caller's proxy; another organization's proxy, or a deleted one, is simply not found. */
export async function findProxy(store: Store, principal: Principal, id: string): Promise<ProxyRecord> {
  const proxy = await store.proxies.findActive(principal.organizationId, id);
  if (!proxy) throw notFound(`proxy "${id}"`);
  return proxy;
}

export async function createProxy(
  deps: ProxyDeps,
  principal: Principal,
  request: CreateProxyRequest,
): Promise<ProxyJson> {
  const id = newId();
  const seal = (field: SecretField, value: string | undefined) =>
    value === undefined ? null : sealSecret(deps.secretsKey, value, secretContext(id, field));
  let config: Record<string, unknown> = request.config;
  let passwordSealed: string | null = null;
  let caBundleSealed: string | null = null;
  if (request.type === "custom") {
    const { password, ca_bundle, ...publicConfig } = request.config;
    config = publicConfig;
    passwordSealed = seal("password", password);
    caBundleSealed = seal("ca_bundle", ca_bundle);
  }
  const record: ProxyRecord = {
    id,
    organizationId: principal.organizationId,
    // The id is the one readable default that is sure to tell proxies apart.
    name: request.name ?? id,
    type: request.type,
    protocol: request.protocol,
    status: null,
    ipAddress: null,
    lastChecked: null,
    bypassHosts: request.bypass_hosts,
    config,
    passwordSealed,
    caBundleSealed,
    createdAt: new Date().toISOString(),
    deletedAt: null,
  };
  await deps.store.proxies.insert(record);
  return toProxyJson(record);
}

export async function listProxies(
  store: Store,
  principal: Principal,
  query: ListProxiesQuery,
): Promise<Page<ProxyJson>> {
  const rows = await store.proxies.list(principal.organizationId, {
    // Stored names are trimmed, so an untrimmed filter could never match.
    name: query.name?.trim(),
    query: query.query,
    offset: query.offset,
    limit: query.limit,
  });
  return pageOf(rows, query.offset, toProxyJson);
}

export async function getProxy(store: Store, principal: Principal, id: string): Promise<ProxyJson> {
  return toProxyJson(await findProxy(store, principal, id));
}

/** Changes the name and nothing else (spec 4.1). */
export async function renameProxy(store: Store, principal: Principal, id: string, name: string): Promise<ProxyJson> {
  const proxy = await store.proxies.rename(principal.organizationId, id, name);
  if (!proxy) throw notFound(`proxy "${id}"`);
  return toProxyJson(proxy);
}

/** Soft delete: the row stays, but no read finds it any more. */
export async function deleteProxy(store: Store, principal: Principal, id: string): Promise<void> {
  if (!(await store.proxies.markDeleted(principal.organizationId, id, new Date().toISOString()))) {
    throw notFound(`proxy "${id}"`);
  }
}
