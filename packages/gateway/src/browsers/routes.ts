import { Router } from "express";
import { principalOf } from "../auth/require-auth.ts";
import { parseInput } from "../http/validate.ts";
import { BrowserCreateBody, createSession } from "./create-session.ts";
import { deleteSession } from "./delete-session.ts";
import { FileInfoQuery, getFileInfo } from "./file-info.ts";
import { BrowserRetrieveQuery, getSession } from "./get-session.ts";
import { BrowserListQuery, listSessions } from "./list-sessions.ts";
import { type PressKeyDeps, pressKey, pressKeyBody } from "./press-key.ts";

export function browserRoutes(deps: PressKeyDeps): Router {
  const router = Router();
  const PressKeyBody = pressKeyBody(deps.maxPressDurationMs);

  router.post("/browsers", async (req, res) => {
    // The official client sends no body at all for create() without params.
    const body = parseInput(BrowserCreateBody, req.body ?? {});
    res.json(await createSession(deps.store, principalOf(res), body));
  });

  router.get("/browsers", async (req, res) => {
    const query = parseInput(BrowserListQuery, req.query, "query");
    const page = await listSessions(deps.store, principalOf(res), query);
    res.setHeader("x-has-more", String(page.hasMore)).setHeader("x-next-offset", String(page.nextOffset));
    res.json(page.items);
  });

  router.get("/browsers/:id_or_name", async (req, res) => {
    const query = parseInput(BrowserRetrieveQuery, req.query, "query");
    res.json(await getSession(deps.store, principalOf(res), req.params.id_or_name, query));
  });

  router.delete("/browsers/:id_or_name", async (req, res) => {
    await deleteSession(deps.store, principalOf(res), req.params.id_or_name);
    res.status(204).end();
  });

  router.post("/browsers/:id_or_name/computer/press_key", async (req, res) => {
    const body = parseInput(PressKeyBody, req.body);
    await pressKey(deps, principalOf(res), req.params.id_or_name, body, String(req.id));
    res.status(200).end();
  });

  router.get("/browsers/:id_or_name/fs/file_info", async (req, res) => {
    const query = parseInput(FileInfoQuery, req.query, "query");
    res.json(await getFileInfo(deps, principalOf(res), req.params.id_or_name, query, String(req.id)));
  });

  return router;
}
