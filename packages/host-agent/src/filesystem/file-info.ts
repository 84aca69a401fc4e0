import { lstat } from "node:fs/promises";
import { posix } from "node:path";
import { modeString } from "./mode-string.ts";

export interface FileInfo {
  name: string;
  path: string;
  sizeBytes: bigint;
  isDir: boolean;
  mode: string;
  /** Modification time in nanoseconds since the epoch. */
  modTimeNs: bigint;
}

export type FileInfoProblem = "invalid_path" | "not_found" | "forbidden";

/** A file_info request the host cannot answer, classified for the caller. */
export class FileInfoError extends Error {
  readonly problem: FileInfoProblem;

  constructor(problem: FileInfoProblem, message: string) {
    super(message);
    this.name = "FileInfoError";
    this.problem = problem;
  }
}

const ERRNO_PROBLEMS: Record<string, FileInfoProblem> = {
  ENOENT: "not_found",
  ENOTDIR: "not_found",
  EACCES: "forbidden",
  EPERM: "forbidden",
  ENAMETOOLONG: "invalid_path",
  ELOOP: "invalid_path",
};

/** Checks the path the way the gateway does, so the agent is safe on its own. */
export function normalizeAbsolutePath(path: string): string {
  if (!path.startsWith("/")) throw new FileInfoError("invalid_path", "path must be absolute (start with /)");
  if (path.includes("\0")) throw new FileInfoError("invalid_path", "path must not contain a NUL byte");
  const normalized = posix.normalize(path);
  // Like Go's filepath.Clean: "/tmp/" and "/tmp" name the same entry.
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

/** lstat semantics: a symlink is reported as itself, never followed. */
export async function fileInfo(rawPath: string): Promise<FileInfo> {
  const path = normalizeAbsolutePath(rawPath);
  let stats: Awaited<ReturnType<typeof lstat>> & { mtimeNs: bigint };
  try {
    stats = await lstat(path, { bigint: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    const problem = ERRNO_PROBLEMS[code];
    if (!problem) throw error;
    throw new FileInfoError(problem, `${code}: ${path}`);
  }
  const isDir = stats.isDirectory();
  return {
    name: path === "/" ? "/" : posix.basename(path),
    path,
    sizeBytes: isDir ? 0n : stats.size,
    isDir,
    mode: modeString(Number(stats.mode)),
    modTimeNs: stats.mtimeNs,
  };
}
