import type { FileInfoResponse } from "@browser-infra/contract";
import type { Principal } from "../../auth/api-keys.ts";
import type { BrowserDeps, FileInfoRecord } from "../file-info.ts";
import { formatRfc3339Nano } from "../rfc3339.ts";
import { useSession } from "../use-session.ts";
import { fsCallError } from "./fs-errors.ts";
import type { PathQuery } from "./schemas.ts";

/** file_info's record, from the agent's message. */
export function fileInfoRecord(info: FileInfoResponse): FileInfoRecord {
  return {
    is_dir: info.isDir,
    mod_time: formatRfc3339Nano(info.modTime?.seconds ?? 0n, info.modTime?.nanos ?? 0),
    mode: info.mode,
    name: info.name,
    path: info.path,
    size_bytes: Number(info.sizeBytes),
  };
}

/** The entries of a directory on the session's host, sorted by name, each as file_info reports it. */
export async function listFiles(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  query: PathQuery,
  requestId: string,
  signal?: AbortSignal,
): Promise<FileInfoRecord[]> {
  const session = await useSession(deps.store, principal, idOrName);
  try {
    const { files } = await deps.hosts
      .client(session.hostAddress)
      .listFiles({ sessionId: session.id, path: query.path }, { timeoutMs: deps.agentTimeoutMs, requestId, signal });
    return files.map(fileInfoRecord);
  } catch (error) {
    throw fsCallError(error, session, false);
  }
}
