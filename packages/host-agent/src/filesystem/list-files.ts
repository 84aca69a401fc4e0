import { lstat, readdir } from "node:fs/promises";
import { posix } from "node:path";
import { type FileInfo, FileInfoError, fileInfo } from "./file-info.ts";
import { checkedPath, errnoOf, FsError, fsErrorOf } from "./fs-error.ts";

/**
 * The entries of a directory (a symlink to one is listed through it), each as file_info reports
 * it, sorted by name as Go's os.ReadDir sorts them. An entry deleted between the listing and its
 * lstat is left out: it is no longer there.
 */
export async function listFiles(rawPath: string): Promise<FileInfo[]> {
  const path = checkedPath(rawPath);
  let names: string[];
  try {
    names = await readdir(path);
  } catch (error) {
    if (errnoOf(error) === "ENOTDIR" && (await exists(path))) {
      throw new FsError("not_directory", `not a directory: ${path}`);
    }
    throw fsErrorOf(error, path);
  }
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const infos = await Promise.all(
    names.map((name) =>
      fileInfo(posix.join(path, name)).catch((error: unknown) => {
        if (error instanceof FileInfoError && error.problem === "not_found") return undefined;
        throw error;
      }),
    ),
  );
  return infos.filter((info) => info !== undefined);
}

/** Whether something (a file, a dangling symlink…) is at the path. */
export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
