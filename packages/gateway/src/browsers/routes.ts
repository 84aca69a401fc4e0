import { principalOf } from "../auth/require-auth.ts";
import { ApiRouter, pathParam } from "../http/api-router.ts";
import { abortedWhenClientGone } from "../http/client-gone.ts";
import { PAGE_HEADERS, sendPage } from "../http/pagination.ts";
import { parseInput } from "../http/validate.ts";
import { BrowserCreateBody, type CreateSessionDeps, createSession } from "./create-session.ts";
import { deleteSession } from "./delete-session.ts";
import { FileInfoQuery, FileInfoRecord, getFileInfo } from "./file-info.ts";
import { addFsRoutes } from "./fs/routes.ts";
import { BrowserRetrieveQuery, getSession } from "./get-session.ts";
import { addInputRoutes } from "./input/routes.ts";
import { BrowserListQuery, listSessions } from "./list-sessions.ts";
import { type PressKeyDeps, pressKey, pressKeyBody } from "./press-key.ts";
import { addScreenRoutes } from "./screen/routes.ts";
import { BrowserSession } from "./session-record.ts";

export type BrowserRouteDeps = PressKeyDeps & CreateSessionDeps;

export function browserRoutes(deps: BrowserRouteDeps): ApiRouter {
  const api = new ApiRouter();
  const PressKeyBody = pressKeyBody(deps.maxPressDurationMs);

  api.add(
    {
      method: "post",
      path: "/browsers",
      operationId: "postBrowsers",
      tag: "Browsers",
      summary: "Create a browser session with a fresh browser of its own on an idle healthy host",
      body: { schema: BrowserCreateBody, required: false },
      response: { status: 200, description: "The new session", schema: BrowserSession },
      errors: [400, 409, 429, 502, 503, 504],
    },
    async (req, res) => {
      // The official client sends no body at all for create() without params.
      const body = parseInput(BrowserCreateBody, req.body ?? {});
      res.json(await createSession(deps, principalOf(res), body, String(req.id)));
    },
  );

  api.add(
    {
      method: "get",
      path: "/browsers",
      operationId: "getBrowsers",
      tag: "Browsers",
      summary: "List browser sessions",
      query: BrowserListQuery,
      response: {
        status: 200,
        description: "One page of sessions",
        schema: BrowserSession.array(),
        headers: PAGE_HEADERS,
      },
      errors: [400],
    },
    async (req, res) => {
      const query = parseInput(BrowserListQuery, req.query, "query");
      const page = await listSessions(deps, principalOf(res), query);
      sendPage(res, page);
    },
  );

  api.add(
    {
      method: "get",
      path: "/browsers/{id_or_name}",
      operationId: "getBrowsersByIdOrName",
      tag: "Browsers",
      summary: "Get a browser session by id or name",
      query: BrowserRetrieveQuery,
      response: { status: 200, description: "The session", schema: BrowserSession },
      errors: [400, 404],
    },
    async (req, res) => {
      const query = parseInput(BrowserRetrieveQuery, req.query, "query");
      res.json(await getSession(deps, principalOf(res), pathParam(req, "id_or_name"), query));
    },
  );

  api.add(
    {
      method: "delete",
      path: "/browsers/{id_or_name}",
      operationId: "deleteBrowsersByIdOrName",
      tag: "Browsers",
      summary: "End a browser session: its browser and everything it wrote are destroyed",
      response: { status: 204, description: "Ended" },
      errors: [404],
    },
    async (req, res) => {
      await deleteSession(deps, principalOf(res), pathParam(req, "id_or_name"));
      res.status(204).end();
    },
  );

  api.add(
    {
      method: "post",
      path: "/browsers/{id_or_name}/computer/press_key",
      operationId: "postBrowsersByIdOrNameComputerPressKey",
      tag: "Browser Computer Controls",
      summary: "Press one or more keys on the host computer",
      body: { schema: PressKeyBody, required: true },
      response: { status: 200, description: "Keys pressed successfully; empty body" },
      errors: [400, 404, 413, 429, 502, 503, 504],
    },
    async (req, res) => {
      const body = parseInput(PressKeyBody, req.body);
      const signal = abortedWhenClientGone(res);
      await pressKey(deps, principalOf(res), pathParam(req, "id_or_name"), body, String(req.id), signal);
      res.status(200).end();
    },
  );

  api.add(
    {
      method: "get",
      path: "/browsers/{id_or_name}/fs/file_info",
      operationId: "getBrowsersByIdOrNameFsFileInfo",
      tag: "Browser Filesystem",
      summary: "Get information about a file or directory",
      query: FileInfoQuery,
      response: { status: 200, description: "The file information record", schema: FileInfoRecord },
      errors: [400, 403, 404, 502, 504],
    },
    async (req, res) => {
      const query = parseInput(FileInfoQuery, req.query, "query");
      const signal = abortedWhenClientGone(res);
      res.json(await getFileInfo(deps, principalOf(res), pathParam(req, "id_or_name"), query, String(req.id), signal));
    },
  );

  addScreenRoutes(api, deps);
  addInputRoutes(api, deps);
  addFsRoutes(api, deps);
  return api;
}
