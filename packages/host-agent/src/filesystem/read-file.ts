import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { Readable } from "node:stream";
import { checkedPath, FsError, fsErrorOf } from "./fs-error.ts";

/** How much one read takes from the file, and so the size of one chunk on the wire. */
export const READ_CHUNK_BYTES = 256 * 1024;

/** A regular file opened for reading, and its size at that moment. */
export interface OpenedFile {
  readonly path: string;
  readonly sizeBytes: number;
  /**
   * The file's first sizeBytes bytes, read as they are consumed. A file truncated meanwhile gives
   * fewer: a reader told sizeBytes must check that it got them all.
   */
  contents(): Readable;
  close(): Promise<void>;
}

/**
 * Opens a regular file (through symlinks, as open(2) does). A directory is refused, and so are
 * FIFOs and devices: a read of them may never end. O_NONBLOCK makes opening a FIFO return at once
 * instead of waiting for a writer, so that it can be refused; it changes nothing for regular files.
 */
export async function openForReading(rawPath: string): Promise<OpenedFile> {
  const path = checkedPath(rawPath);
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw fsErrorOf(error, path);
  }
  let sizeBytes: number;
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new FsError("is_directory", `is a directory: ${path}`);
    if (!stats.isFile()) throw new FsError("not_regular_file", `not a regular file: ${path}`);
    sizeBytes = stats.size;
  } catch (error) {
    await handle.close();
    throw error;
  }
  return {
    path,
    sizeBytes,
    contents: () => boundedContents(handle, sizeBytes),
    close: () => handle.close(),
  };
}

function boundedContents(handle: FileHandle, sizeBytes: number): Readable {
  // createReadStream's end is inclusive: it cannot express an empty range.
  if (sizeBytes === 0) return Readable.from([]);
  return handle.createReadStream({ start: 0, end: sizeBytes - 1, highWaterMark: READ_CHUNK_BYTES, autoClose: false });
}
