import { randomBytes } from "node:crypto";
import { renameSync, unlinkSync } from "node:fs";
import { chmod, copyFile, cp, lstat, mkdir, rename, rm, unlink } from "node:fs/promises";
import { posix } from "node:path";
import { checkedPath, errnoOf, FsError, fsErrorOf, parseMode } from "./fs-error.ts";

/**
 * Called synchronously right before each change to the file system, in the same turn: it throws
 * when the change must not happen any more (the session was fenced). A change it let through had
 * begun before the fence did.
 */
export type BeforeChange = () => void;

/** create_directory's mode when the caller names none, as the official service has it. */
export const DEFAULT_DIRECTORY_MODE = 0o755;

type Stats = Awaited<ReturnType<typeof lstat>>;

async function lstatOf(path: string): Promise<Stats> {
  try {
    return await lstat(path);
  } catch (error) {
    throw fsErrorOf(error, path);
  }
}

async function lstatIfAny(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch {
    return undefined;
  }
}

/** Deletes a file, a symlink (not its target) or any other entry that is not a directory. */
export async function deleteFile(rawPath: string, beforeChange: BeforeChange): Promise<void> {
  const path = checkedPath(rawPath);
  if ((await lstatOf(path)).isDirectory()) {
    throw new FsError("is_directory", `is a directory (delete it with delete_directory): ${path}`);
  }
  beforeChange();
  try {
    await unlink(path);
  } catch (error) {
    throw fsErrorOf(error, path);
  }
}

/** Deletes a directory with everything in it; a symlink to one is not a directory. */
export async function deleteDirectory(rawPath: string, beforeChange: BeforeChange): Promise<void> {
  const path = checkedPath(rawPath);
  if (path === "/") throw new FsError("invalid_path", "the root directory cannot be deleted");
  if (!(await lstatOf(path)).isDirectory()) {
    throw new FsError("not_directory", `not a directory (delete it with delete_file): ${path}`);
  }
  beforeChange();
  try {
    await rm(path, { recursive: true });
  } catch (error) {
    throw fsErrorOf(error, path);
  }
}

/**
 * Creates a directory and its missing parents, as `mkdir -p` does: an existing directory is left
 * as it is. The new directory gets the mode exactly, whatever the umask; new parents get 0755
 * less the umask, as the official service gives them.
 */
export async function createDirectory(rawPath: string, modeText: string, beforeChange: BeforeChange): Promise<void> {
  const path = checkedPath(rawPath);
  const mode = parseMode(modeText, DEFAULT_DIRECTORY_MODE);
  const existing = await lstatIfAny(path);
  if (existing?.isDirectory()) return;
  if (existing) throw new FsError("exists", `a file is in the way: ${path}`);
  beforeChange();
  try {
    await mkdir(path, { recursive: true, mode: DEFAULT_DIRECTORY_MODE });
    beforeChange();
    await chmod(path, mode);
  } catch (error) {
    if (error instanceof FsError) throw error;
    // A component of the path is a file.
    if (["EEXIST", "ENOTDIR"].includes(errnoOf(error))) {
      throw new FsError("not_directory", `a component of ${path} is not a directory`);
    }
    throw fsErrorOf(error, path);
  }
}

/**
 * Moves or renames a file or a directory, as rename(2) does: an existing file at the destination
 * is replaced, an empty directory too when the source is one. Across file systems (a bind mount,
 * a private /tmp), where rename(2) cannot, a regular file is copied beside the destination and
 * renamed over it, anything else copied whole to a destination that must not exist yet; the
 * source is deleted afterwards.
 */
export async function movePath(rawSource: string, rawDestination: string, beforeChange: BeforeChange): Promise<void> {
  const source = checkedPath(rawSource);
  const destination = checkedPath(rawDestination);
  const sourceStats = await lstatOf(source);
  if (destination === source) return;
  if (sourceStats.isDirectory() && destination.startsWith(`${source}/`)) {
    throw new FsError("invalid_path", `a directory cannot be moved into itself: ${source} to ${destination}`);
  }
  beforeChange();
  try {
    await rename(source, destination);
    return;
  } catch (error) {
    if (errnoOf(error) !== "EXDEV") throw await moveError(error, sourceStats, destination);
  }
  if (sourceStats.isFile()) await copyOver(source, destination, beforeChange);
  else await copyTree(source, destination, beforeChange);
  beforeChange();
  try {
    await rm(source, { recursive: true, force: true });
  } catch (error) {
    throw fsErrorOf(error, source);
  }
}

/** rename(2)'s refusals, named for what is in the way at the destination. */
async function moveError(error: unknown, sourceStats: Stats, destination: string): Promise<unknown> {
  const code = errnoOf(error);
  if (code === "EISDIR") return new FsError("is_directory", `the destination is a directory: ${destination}`);
  if (code === "ENOTEMPTY" || code === "EEXIST") {
    return new FsError("exists", `the destination is a directory that is not empty: ${destination}`);
  }
  if (code === "ENOTDIR" && sourceStats.isDirectory() && (await lstatIfAny(destination))) {
    return new FsError("not_directory", `the destination is not a directory: ${destination}`);
  }
  return fsErrorOf(error, destination);
}

/** A directory (or a symlink, a FIFO…) copied as it is, to a destination that must not exist yet. */
async function copyTree(source: string, destination: string, beforeChange: BeforeChange): Promise<void> {
  if (await lstatIfAny(destination)) {
    throw new FsError("exists", `the destination is on another file system and already exists: ${destination}`);
  }
  beforeChange();
  try {
    await cp(source, destination, { recursive: true, errorOnExist: true, force: false, verbatimSymlinks: true });
  } catch (error) {
    throw fsErrorOf(error, destination);
  }
}

/** The copy takes the destination's path in one rename, so nobody ever sees half of it there. */
async function copyOver(source: string, destination: string, beforeChange: BeforeChange): Promise<void> {
  if ((await lstatIfAny(destination))?.isDirectory()) {
    throw new FsError("is_directory", `the destination is a directory: ${destination}`);
  }
  const temporary = posix.join(posix.dirname(destination), `.move-${randomBytes(8).toString("hex")}.partial`);
  beforeChange();
  try {
    await copyFile(source, temporary, 0);
    beforeChange();
    renameSync(temporary, destination);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // Never created.
    }
    if (error instanceof FsError) throw error;
    throw fsErrorOf(error, destination);
  }
}
