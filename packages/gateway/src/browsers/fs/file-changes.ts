import type { Principal } from "../../auth/api-keys.ts";
import type { HostPool } from "../../hosts/host-pool.ts";
import type { BrowserDeps } from "../file-info.ts";
import { useSession } from "../use-session.ts";
import { fsCallError } from "./fs-errors.ts";
import type { CreateDirectoryBody, MoveBody, PathBody } from "./schemas.ts";

type HostClient = ReturnType<HostPool["client"]>;

/** What one change asks of the agent, given the session's id and the call options. */
type Change = (
  client: HostClient,
  sessionId: string,
  options: { timeoutMs: number; requestId: string; signal?: AbortSignal },
) => Promise<unknown>;

/**
 * Makes one change to the files of the session's host. A failure after the call went out is never
 * marked retryable: the change may have been made (a retried move would then find no source).
 */
async function change(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  requestId: string,
  signal: AbortSignal | undefined,
  call: Change,
): Promise<void> {
  const session = await useSession(deps.store, principal, idOrName);
  try {
    await call(deps.hosts.client(session.hostAddress), session.id, {
      timeoutMs: deps.agentTimeoutMs,
      requestId,
      signal,
    });
  } catch (error) {
    throw fsCallError(error, session, true);
  }
}

/** Deletes a file (not a directory; a symlink itself, not its target). */
export function deleteFile(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  body: PathBody,
  requestId: string,
  signal?: AbortSignal,
): Promise<void> {
  return change(deps, principal, idOrName, requestId, signal, (client, sessionId, options) =>
    client.deleteFile({ sessionId, path: body.path }, options),
  );
}

/** Deletes a directory with everything in it. */
export function deleteDirectory(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  body: PathBody,
  requestId: string,
  signal?: AbortSignal,
): Promise<void> {
  return change(deps, principal, idOrName, requestId, signal, (client, sessionId, options) =>
    client.deleteDirectory({ sessionId, path: body.path }, options),
  );
}

/** Creates a directory with its missing parents; an existing directory is fine. */
export function createDirectory(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  body: CreateDirectoryBody,
  requestId: string,
  signal?: AbortSignal,
): Promise<void> {
  return change(deps, principal, idOrName, requestId, signal, (client, sessionId, options) =>
    client.createDirectory({ sessionId, path: body.path, mode: body.mode ?? "" }, options),
  );
}

/** Moves or renames a file or a directory. */
export function moveFile(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  body: MoveBody,
  requestId: string,
  signal?: AbortSignal,
): Promise<void> {
  return change(deps, principal, idOrName, requestId, signal, (client, sessionId, options) =>
    client.moveFile({ sessionId, srcPath: body.src_path, destPath: body.dest_path }, options),
  );
}
