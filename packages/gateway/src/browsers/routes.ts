import { Router } from "express";
import { principalOf } from "../auth/require-auth.ts";
import { parseInput } from "../http/validate.ts";
import { FileInfoQuery, getFileInfo } from "./file-info.ts";
import { type PressKeyDeps, pressKey, pressKeyBody } from "./press-key.ts";

export function browserRoutes(deps: PressKeyDeps): Router {
  const router = Router();
  const PressKeyBody = pressKeyBody(deps.maxPressDurationMs);

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
