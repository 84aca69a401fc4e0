import { type Network, ProxyAddressPolicy } from "@browser-infra/contract";
import { principalOf } from "../auth/require-auth.ts";
import { ApiRouter, pathParam } from "../http/api-router.ts";
import { PAGE_HEADERS, sendPage } from "../http/pagination.ts";
import { parseInput } from "../http/validate.ts";
import { CHECK_TIMEOUT_MS, checkProxy } from "./check.ts";
import { type CheckLimitSettings, ProxyCheckLimits } from "./check-limits.ts";
import type { EndpointDeps } from "./endpoint.ts";
import { createProxy, deleteProxy, getProxy, listProxies, type ProxyDeps, renameProxy } from "./proxies.ts";
import { ProxyJson } from "./proxy-json.ts";
import { CheckProxyRequest, CreateProxyRequest, ListProxiesQuery, ProxyUpdateRequest } from "./schemas.ts";

/** Carries the check's explanation, since the body is the Proxy record and has no field for it. */
const CHECK_MESSAGE_HEADER = "x-proxy-check-message";

function headerValue(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?");
}

export function proxyRoutes(
  deps: ProxyDeps & EndpointDeps & { proxyChecksPerOrg: CheckLimitSettings; proxyAllowedNetworks: readonly Network[] },
): ApiRouter {
  const api = new ApiRouter();
  const checkDeps = {
    ...deps,
    checkLimits: new ProxyCheckLimits(deps.proxyChecksPerOrg, CHECK_TIMEOUT_MS),
    addressPolicy: new ProxyAddressPolicy(deps.proxyAllowedNetworks),
  };

  api.add(
    {
      method: "post",
      path: "/proxies",
      operationId: "postProxies",
      tag: "Proxies",
      summary: "Create a proxy configuration",
      body: { schema: CreateProxyRequest, required: true },
      response: { status: 200, description: "The new proxy", schema: ProxyJson },
      errors: [400, 413],
    },
    async (req, res) => {
      const body = parseInput(CreateProxyRequest, req.body);
      res.json(await createProxy(deps, principalOf(res), body));
    },
  );

  api.add(
    {
      method: "get",
      path: "/proxies",
      operationId: "getProxies",
      tag: "Proxies",
      summary: "List proxies",
      query: ListProxiesQuery,
      response: {
        status: 200,
        description: "One page of proxies",
        schema: ProxyJson.array(),
        headers: PAGE_HEADERS,
      },
      errors: [400],
    },
    async (req, res) => {
      const query = parseInput(ListProxiesQuery, req.query, "query");
      const page = await listProxies(deps.store, principalOf(res), query);
      sendPage(res, page);
    },
  );

  api.add(
    {
      method: "get",
      path: "/proxies/{id}",
      operationId: "getProxiesById",
      tag: "Proxies",
      summary: "Get a proxy by id",
      response: { status: 200, description: "The proxy", schema: ProxyJson },
      errors: [404],
    },
    async (req, res) => {
      res.json(await getProxy(deps.store, principalOf(res), pathParam(req, "id")));
    },
  );

  api.add(
    {
      method: "patch",
      path: "/proxies/{id}",
      operationId: "patchProxiesById",
      tag: "Proxies",
      summary: "Rename proxy by ID",
      body: { schema: ProxyUpdateRequest, required: true },
      response: { status: 200, description: "The updated proxy", schema: ProxyJson },
      errors: [400, 404],
    },
    async (req, res) => {
      const { name } = parseInput(ProxyUpdateRequest, req.body);
      res.json(await renameProxy(deps.store, principalOf(res), pathParam(req, "id"), name));
    },
  );

  api.add(
    {
      method: "delete",
      path: "/proxies/{id}",
      operationId: "deleteProxiesById",
      tag: "Proxies",
      summary: "Delete a proxy",
      response: { status: 204, description: "Deleted" },
      errors: [404],
    },
    async (req, res) => {
      await deleteProxy(deps.store, principalOf(res), pathParam(req, "id"));
      res.status(204).end();
    },
  );

  api.add(
    {
      method: "post",
      path: "/proxies/{id}/check",
      operationId: "postProxiesByIdCheck",
      tag: "Proxies",
      summary: "Check a proxy's health",
      body: { schema: CheckProxyRequest, required: false },
      response: {
        status: 200,
        description: "The proxy with this check's outcome",
        schema: ProxyJson,
        headers: { [CHECK_MESSAGE_HEADER]: "What the check found, in words" },
      },
      errors: [400, 404, 429],
    },
    async (req, res) => {
      // The body is optional: no body means the configured default target.
      const body = parseInput(CheckProxyRequest, req.body ?? {});
      const { proxy, message } = await checkProxy(checkDeps, principalOf(res), pathParam(req, "id"), body);
      req.log.info({ proxy_id: proxy.id, status: proxy.status, check: message }, "proxy checked");
      res.setHeader(CHECK_MESSAGE_HEADER, headerValue(message)).json(proxy);
    },
  );

  return api;
}
