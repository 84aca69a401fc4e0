import { z } from "zod";
import type { Principal } from "../auth/api-keys.ts";
import { hostCallError } from "../hosts/host-errors.ts";
import type { HostPool } from "../hosts/host-pool.ts";
import type { Store } from "../store/store.ts";
import { formatRfc3339Nano } from "./rfc3339.ts";
import type { SessionLifecycle } from "./session-lifecycle.ts";
import { useSession } from "./use-session.ts";

export const FileInfoQuery = z.object({
  path: z
    .string({ error: (issue) => (issue.input === undefined ? "required" : "must be a single string") })
    .startsWith("/", { error: "must be an absolute path (start with /)" }),
});
export type FileInfoQuery = z.infer<typeof FileInfoQuery>;

/** Spec 2.4, field for field. */
export const FileInfoRecord = z.object({
  is_dir: z.boolean(),
  mod_time: z.string(),
  mode: z.string(),
  name: z.string(),
  path: z.string(),
  size_bytes: z.number().int(),
});
export type FileInfoRecord = z.infer<typeof FileInfoRecord>;

export interface BrowserDeps {
  store: Store;
  hosts: HostPool;
  lifecycle: SessionLifecycle;
  agentTimeoutMs: number;
}

export async function getFileInfo(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  query: FileInfoQuery,
  requestId: string,
  signal?: AbortSignal,
): Promise<FileInfoRecord> {
  const session = await useSession(deps.store, principal, idOrName);
  let info: Awaited<ReturnType<ReturnType<HostPool["client"]>["fileInfo"]>>;
  try {
    info = await deps.hosts
      .client(session.hostAddress)
      .fileInfo({ path: query.path, sessionId: session.id }, { timeoutMs: deps.agentTimeoutMs, requestId, signal });
  } catch (error) {
    throw hostCallError(error, session.hostAddress, false, session.id);
  }
  return {
    is_dir: info.isDir,
    mod_time: formatRfc3339Nano(info.modTime?.seconds ?? 0n, info.modTime?.nanos ?? 0),
    mode: info.mode,
    name: info.name,
    path: info.path,
    size_bytes: Number(info.sizeBytes),
  };
}
