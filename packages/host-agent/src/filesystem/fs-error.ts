import { FileInfoError, type FileInfoProblem, normalizeAbsolutePath } from "./file-info.ts";

/**
 * What went wrong with a file operation, as the caller can act on it: file_info's three problems,
 * and the conflicts of operations that change files.
 */
export type FsProblem =
  | FileInfoProblem
  /** A bad argument other than the path (a mode that is not octal). */
  | "invalid_argument"
  /** Something is in the way: the path exists, a directory is not empty. */
  | "exists"
  /** A directory where a file is expected… */
  | "is_directory"
  /** …a file where a directory is expected, or neither (a FIFO, a device) where a regular file is. */
  | "not_directory"
  | "not_regular_file"
  | "no_space";

export class FsError extends Error {
  readonly problem: FsProblem;

  constructor(problem: FsProblem, message: string) {
    super(message);
    this.name = "FsError";
    this.problem = problem;
  }
}

/** The errno values a caller can act on; anything else is the agent's failure. */
const ERRNO_PROBLEMS: Record<string, FsProblem> = {
  ENOENT: "not_found",
  // A component of the path is a file: as file_info says, there is nothing at the path.
  ENOTDIR: "not_found",
  EACCES: "forbidden",
  EPERM: "forbidden",
  EROFS: "forbidden",
  ENAMETOOLONG: "invalid_path",
  ELOOP: "invalid_path",
  EEXIST: "exists",
  ENOTEMPTY: "exists",
  EBUSY: "exists",
  EISDIR: "is_directory",
  ENOSPC: "no_space",
  EDQUOT: "no_space",
};

export function errnoOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? "";
}

/** A failed system call as an FsError naming the path, when its errno is one the caller can act on. */
export function fsErrorOf(error: unknown, path: string): unknown {
  const code = errnoOf(error);
  const problem = ERRNO_PROBLEMS[code];
  if (!problem) return error;
  return new FsError(problem, `${code}: ${path}`);
}

/** file_info's path rules (absolute, no NUL byte, normalized), failing as an FsError. */
export function checkedPath(path: string): string {
  try {
    return normalizeAbsolutePath(path);
  } catch (error) {
    if (error instanceof FileInfoError) throw new FsError(error.problem, error.message);
    throw error;
  }
}

/** An octal mode such as "644" or "0755" (what the official client sends), or the fallback when empty. */
export function parseMode(text: string, fallback: number): number {
  if (text === "") return fallback;
  if (!/^[0-7]{3,4}$/.test(text)) {
    throw new FsError("invalid_argument", `mode must be 3 or 4 octal digits such as 644 or 0755, got "${text}"`);
  }
  return Number.parseInt(text, 8);
}
