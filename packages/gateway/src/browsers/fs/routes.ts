import { pipeline } from "node:stream/promises";
import type { z } from "zod";
import type { Principal } from "../../auth/api-keys.ts";
import { principalOf } from "../../auth/require-auth.ts";
import type { ApiRouter } from "../../http/api-router.ts";
import { pathParam } from "../../http/api-router.ts";
import { abortedWhenClientGone } from "../../http/client-gone.ts";
import { parseInput } from "../../http/validate.ts";
import type { BrowserDeps } from "../file-info.ts";
import type { BrowserRouteDeps } from "../routes.ts";
import { createDirectory, deleteDirectory, deleteFile, moveFile } from "./file-changes.ts";
import { listFiles } from "./file-list.ts";
import { readFile } from "./read-file.ts";
import { Bytes, CreateDirectoryBody, FileList, MoveBody, PathBody, PathQuery, WriteFileQuery } from "./schemas.ts";
import { type WriteFileDeps, writeFile } from "./write-file.ts";

const TAG = "Browser Filesystem";
const SESSION_PATH = "/browsers/{id_or_name}/fs";

/** The files API: the paths, methods, bodies and answers of the official client's browsers.fs. */
export function addFsRoutes(api: ApiRouter, deps: BrowserRouteDeps & Pick<WriteFileDeps, "maxUploadBytes">): void {
  api.add(
    {
      method: "get",
      path: `${SESSION_PATH}/list_files`,
      operationId: "getBrowsersByIdOrNameFsListFiles",
      tag: TAG,
      summary: "List the entries of a directory, sorted by name, each as file_info reports it",
      query: PathQuery,
      response: { status: 200, description: "The directory's entries", schema: FileList },
      errors: [400, 403, 404, 409, 502, 504],
    },
    async (req, res) => {
      const query = parseInput(PathQuery, req.query, "query");
      const signal = abortedWhenClientGone(res);
      res.json(await listFiles(deps, principalOf(res), pathParam(req, "id_or_name"), query, String(req.id), signal));
    },
  );

  api.add(
    {
      method: "get",
      path: `${SESSION_PATH}/read_file`,
      operationId: "getBrowsersByIdOrNameFsReadFile",
      tag: TAG,
      summary: "Read a regular file, streamed",
      query: PathQuery,
      response: {
        status: 200,
        description: "The file's bytes; Content-Length is its size when it was opened",
        schema: Bytes,
        contentType: "application/octet-stream",
      },
      errors: [400, 403, 404, 409, 502, 504],
    },
    async (req, res) => {
      const query = parseInput(PathQuery, req.query, "query");
      const signal = abortedWhenClientGone(res);
      const file = await readFile(deps, principalOf(res), pathParam(req, "id_or_name"), query, String(req.id), signal);
      res.status(200);
      res.setHeader("content-type", "application/octet-stream");
      res.setHeader("content-length", String(file.sizeBytes));
      if (req.method === "HEAD") {
        file.contents.destroy();
        res.end();
        return;
      }
      try {
        await pipeline(file.contents, res);
      } catch (error) {
        // The status went out with the first byte: all that is left is to cut the connection, so
        // that the client sees a body shorter than its Content-Length, not a whole file.
        res.destroy();
        if (!signal.aborted) req.log.warn({ err: error }, "read_file cut short");
      }
    },
  );

  api.add(
    {
      method: "put",
      path: `${SESSION_PATH}/write_file`,
      operationId: "putBrowsersByIdOrNameFsWriteFile",
      tag: TAG,
      summary: "Write a file (created with its missing parent directories, or replaced), streamed",
      query: WriteFileQuery,
      body: { schema: Bytes, required: true, contentType: "application/octet-stream" },
      response: { status: 201, description: "Written; empty body" },
      errors: [400, 403, 404, 409, 413, 502, 504, 507],
    },
    async (req, res) => {
      const query = parseInput(WriteFileQuery, req.query, "query");
      const length = req.headers["content-length"];
      const signal = abortedWhenClientGone(res);
      await writeFile(
        deps,
        principalOf(res),
        pathParam(req, "id_or_name"),
        query,
        req,
        length === undefined ? undefined : Number(length),
        String(req.id),
        signal,
      );
      res.status(201).end();
    },
  );

  addChange(api, deps, {
    name: "delete_file",
    operationId: "putBrowsersByIdOrNameFsDeleteFile",
    summary: "Delete a file (not a directory; a symlink itself, not its target)",
    schema: PathBody,
    status: 200,
    run: deleteFile,
  });
  addChange(api, deps, {
    name: "delete_directory",
    operationId: "putBrowsersByIdOrNameFsDeleteDirectory",
    summary: "Delete a directory with everything in it",
    schema: PathBody,
    status: 200,
    run: deleteDirectory,
  });
  addChange(api, deps, {
    name: "create_directory",
    operationId: "putBrowsersByIdOrNameFsCreateDirectory",
    summary: "Create a directory with its missing parents; an existing directory is left as it is",
    schema: CreateDirectoryBody,
    status: 201,
    run: createDirectory,
  });
  addChange(api, deps, {
    name: "move",
    operationId: "putBrowsersByIdOrNameFsMove",
    summary: "Move or rename a file or a directory",
    schema: MoveBody,
    status: 200,
    run: moveFile,
  });
}

/** A change to the session's files: a PUT with a JSON body, answered with an empty body. */
function addChange<S extends z.ZodType>(
  api: ApiRouter,
  deps: BrowserDeps,
  change: {
    name: string;
    operationId: string;
    summary: string;
    schema: S;
    status: 200 | 201;
    run: (
      deps: BrowserDeps,
      principal: Principal,
      idOrName: string,
      body: z.output<S>,
      requestId: string,
      signal: AbortSignal,
    ) => Promise<void>;
  },
): void {
  api.add(
    {
      method: "put",
      path: `${SESSION_PATH}/${change.name}`,
      operationId: change.operationId,
      tag: TAG,
      summary: change.summary,
      body: { schema: change.schema, required: true },
      response: { status: change.status, description: "Done; empty body" },
      errors: [400, 403, 404, 409, 413, 502, 504],
    },
    async (req, res) => {
      const body = parseInput(change.schema, req.body);
      const signal = abortedWhenClientGone(res);
      await change.run(deps, principalOf(res), pathParam(req, "id_or_name"), body, String(req.id), signal);
      res.status(change.status).end();
    },
  );
}
