import { randomBytes } from "node:crypto";
import { closeSync, constants, fchmodSync, openSync, renameSync, unlinkSync, write } from "node:fs";
import { lstat, mkdir } from "node:fs/promises";
import { posix } from "node:path";
import { promisify } from "node:util";
import { checkedPath, errnoOf, FsError, fsErrorOf, parseMode } from "./fs-error.ts";

const writeAt = promisify(write);

/** write_file's mode when the caller names none, as the official service has it. */
export const DEFAULT_FILE_MODE = 0o644;

/**
 * A file being written: its bytes go to a temporary file beside it, which takes the file's path
 * only at commit. Whatever cuts the write short (the caller hangs up, the session is fenced, the
 * disk fills), no half file is ever at the path, and the temporary file is removed.
 */
export interface FileWrite {
  readonly path: string;
  /** Appends the next piece; rejects once the write was discarded. */
  append(chunk: Uint8Array): Promise<void>;
  /**
   * Puts the file at its path, replacing what was there (a symlink is replaced, not followed),
   * with its mode whatever the umask, and resolves with its size. Refused once the write was
   * discarded; the last step is one synchronous rename, so no abort can come between the check
   * and the file appearing.
   */
  commit(): Promise<number>;
  /**
   * Removes the temporary file at once (synchronously: when the fence calls this, the file is gone
   * before the fence goes on). A piece still being appended lands in the unlinked file, which
   * nobody can reach and which goes with its descriptor.
   */
  discard(): void;
}

/**
 * Begins writing a file at an absolute path, creating missing parent directories (0755, as the
 * official service does). The temporary file is created in the same turn as the check of
 * `signal`, so a write whose signal was aborted (the session fenced) never creates one; once it
 * exists, aborting the signal discards it.
 */
export async function beginWrite(rawPath: string, modeText: string, signal: AbortSignal): Promise<FileWrite> {
  const path = checkedPath(rawPath);
  const mode = parseMode(modeText, DEFAULT_FILE_MODE);
  if (path === "/") throw new FsError("is_directory", "is a directory: /");
  const directory = posix.dirname(path);
  try {
    if ((await lstat(path)).isDirectory()) throw new FsError("is_directory", `is a directory: ${path}`);
  } catch (error) {
    if (error instanceof FsError) throw error;
    // Nothing there, or a file where a parent directory should be (which mkdir then names).
    if (!["ENOENT", "ENOTDIR"].includes(errnoOf(error))) throw fsErrorOf(error, path);
  }
  try {
    await mkdir(directory, { recursive: true, mode: 0o755 });
  } catch (error) {
    // A component of the path is a file.
    if (["EEXIST", "ENOTDIR"].includes(errnoOf(error))) {
      throw new FsError("not_directory", `not a directory: a component of ${directory}`);
    }
    throw fsErrorOf(error, directory);
  }
  signal.throwIfAborted();
  const temporary = posix.join(directory, `.write-${randomBytes(8).toString("hex")}.partial`);
  let fd: number;
  try {
    fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    throw fsErrorOf(error, path);
  }
  const write = new TemporaryFile(path, temporary, fd, mode, signal);
  signal.addEventListener("abort", () => write.discard(), { once: true });
  return write;
}

class TemporaryFile implements FileWrite {
  readonly path: string;
  readonly #temporary: string;
  readonly #fd: number;
  readonly #mode: number;
  readonly #signal: AbortSignal;
  #size = 0;
  #over = false;
  /** The piece being written: the descriptor is closed only once it settled, never under it. */
  #writing: Promise<unknown> = Promise.resolve();

  constructor(path: string, temporary: string, fd: number, mode: number, signal: AbortSignal) {
    this.path = path;
    this.#temporary = temporary;
    this.#fd = fd;
    this.#mode = mode;
    this.#signal = signal;
  }

  async append(chunk: Uint8Array): Promise<void> {
    this.#refuseWhenOver();
    const writing = this.#writeAll(chunk);
    this.#writing = writing.catch(() => undefined);
    try {
      await writing;
    } catch (error) {
      this.discard();
      throw fsErrorOf(error, this.path);
    }
    this.#size += chunk.length;
  }

  async #writeAll(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const { bytesWritten } = await writeAt(this.#fd, chunk, offset, chunk.length - offset, null);
      offset += bytesWritten;
    }
  }

  async commit(): Promise<number> {
    this.#refuseWhenOver();
    await this.#writing;
    // Checked again: the session may have been fenced while the last piece was written.
    this.#refuseWhenOver();
    this.#over = true;
    try {
      try {
        fchmodSync(this.#fd, this.#mode);
      } finally {
        closeSync(this.#fd);
      }
      renameSync(this.#temporary, this.path);
    } catch (error) {
      removeQuietly(this.#temporary);
      throw fsErrorOf(error, this.path);
    }
    return this.#size;
  }

  discard(): void {
    if (this.#over) return;
    this.#over = true;
    removeQuietly(this.#temporary);
    const fd = this.#fd;
    void this.#writing.then(() => closeSync(fd));
  }

  #refuseWhenOver(): void {
    this.#signal.throwIfAborted();
    if (this.#over) throw new Error(`the write of ${this.path} is over`);
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already: the file system was unmounted under it, or it was never there.
  }
}
