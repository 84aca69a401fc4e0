import { Router } from "express";
import { principalOf } from "../auth/require-auth.ts";
import { parseInput } from "../http/validate.ts";
import { checkProxy } from "./check.ts";
import { createProxy, deleteProxy, getProxy, listProxies, type ProxyDeps, renameProxy } from "./proxies.ts";
import { CheckProxyRequest, CreateProxyRequest, ListProxiesQuery, ProxyUpdateRequest } from "./schemas.ts";

/** Carries the check's explanation, since the body is the Proxy record and has no field for it. */
const CHECK_MESSAGE_HEADER = "x-proxy-check-message";

function headerValue(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?");
}

export function proxyRoutes(deps: ProxyDeps): Router {
  const router = Router();

  router.post("/proxies", async (req, res) => {
    const body = parseInput(CreateProxyRequest, req.body);
    res.json(await createProxy(deps, principalOf(res), body));
  });

  router.get("/proxies", async (req, res) => {
    const query = parseInput(ListProxiesQuery, req.query, "query");
    const page = await listProxies(deps.store, principalOf(res), query);
    res.setHeader("x-has-more", String(page.hasMore)).setHeader("x-next-offset", String(page.nextOffset));
    res.json(page.items);
  });

  router.get("/proxies/:id", async (req, res) => {
    res.json(await getProxy(deps.store, principalOf(res), req.params.id));
  });

  router.patch("/proxies/:id", async (req, res) => {
    const { name } = parseInput(ProxyUpdateRequest, req.body);
    res.json(await renameProxy(deps.store, principalOf(res), req.params.id, name));
  });

  router.delete("/proxies/:id", async (req, res) => {
    await deleteProxy(deps.store, principalOf(res), req.params.id);
    res.status(204).end();
  });

  router.post("/proxies/:id/check", async (req, res) => {
    // The body is optional: no body means the configured default target.
    const body = parseInput(CheckProxyRequest, req.body ?? {});
    const { proxy, message } = await checkProxy(deps, principalOf(res), req.params.id, body);
    req.log.info({ proxy_id: proxy.id, status: proxy.status, check: message }, "proxy checked");
    res.setHeader(CHECK_MESSAGE_HEADER, headerValue(message)).json(proxy);
  });

  return router;
}
