import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDirectory, deleteDirectory, deleteFile, movePath } from "../../src/filesystem/change-files.ts";
import { listFiles } from "../../src/filesystem/list-files.ts";
import { openForReading } from "../../src/filesystem/read-file.ts";
import { beginWrite } from "../../src/filesystem/write-file.ts";

let dir: string;
const allowed = () => undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "change-files-"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("beginWrite", () => {
  it("puts nothing at the path until commit, then the whole file with its mode", async () => {
    const path = join(dir, "new", "file.bin");
    const write = await beginWrite(path, "0604", new AbortController().signal);
    await write.append(Buffer.from("hello "));
    await write.append(Buffer.from("world"));
    expect(readdirSync(join(dir, "new"))).toEqual([expect.stringMatching(/^\.write-[0-9a-f]{16}\.partial$/)]);
    expect(await write.commit()).toBe(11);
    expect(readdirSync(join(dir, "new"))).toEqual(["file.bin"]);
    expect(readFileSync(path, "utf8")).toBe("hello world");
    expect(statSync(path).mode & 0o7777).toBe(0o604);
  });

  it("removes its temporary file at once, in the same turn, when its signal aborts, and refuses to commit", async () => {
    const aborted = new AbortController();
    const write = await beginWrite(join(dir, "file.bin"), "", aborted.signal);
    const appending = write.append(Buffer.alloc(1024 * 1024));
    aborted.abort(new Error("fenced"));
    expect(readdirSync(dir)).toEqual([]);
    await appending.catch(() => undefined);
    await expect(write.commit()).rejects.toThrow("fenced");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("creates no temporary file when its signal was aborted before it could", async () => {
    const aborted = new AbortController();
    const beginning = beginWrite(join(dir, "deep", "file.bin"), "", aborted.signal);
    aborted.abort(new Error("fenced"));
    await expect(beginning).rejects.toThrow("fenced");
    expect(readdirSync(join(dir, "deep"))).toEqual([]);
  });

  it.each([
    ["a directory at the path", "sub", "is_directory"],
    ["a file where a parent directory should be", "file.txt/below", "not_directory"],
    ["a relative path", "relative", "invalid_path"],
  ])("refuses %s", async (_what, relative, problem) => {
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "file.txt"), "x");
    const path = relative === "relative" ? relative : join(dir, relative);
    await expect(beginWrite(path, "", new AbortController().signal)).rejects.toMatchObject({ problem });
  });

  it("refuses a mode that is not 3 or 4 octal digits", async () => {
    await expect(beginWrite(join(dir, "f"), "0o644", new AbortController().signal)).rejects.toMatchObject({
      problem: "invalid_argument",
    });
  });
});

describe("openForReading", () => {
  it("refuses a directory, a device, and a FIFO without waiting for a writer", async () => {
    execFileSync("mkfifo", [join(dir, "fifo")]);
    await expect(openForReading(dir)).rejects.toMatchObject({ problem: "is_directory" });
    await expect(openForReading("/dev/zero")).rejects.toMatchObject({ problem: "not_regular_file" });
    await expect(openForReading(join(dir, "fifo"))).rejects.toMatchObject({ problem: "not_regular_file" });
  });

  it("reads the file's bytes, and an empty file as no bytes", async () => {
    writeFileSync(join(dir, "empty"), "");
    writeFileSync(join(dir, "full"), "contents");
    for (const [name, expected] of [
      ["empty", ""],
      ["full", "contents"],
    ]) {
      const file = await openForReading(join(dir, name as string));
      const chunks: Buffer[] = [];
      for await (const chunk of file.contents()) chunks.push(chunk as Buffer);
      await file.close();
      expect([file.sizeBytes, Buffer.concat(chunks).toString()]).toEqual([expected?.length, expected]);
    }
  });
});

describe("listFiles", () => {
  it("lists entries sorted by name, symlinks as themselves, through a symlink to the directory", async () => {
    writeFileSync(join(dir, "b.txt"), "bb");
    mkdirSync(join(dir, "a"));
    symlinkSync("/nowhere", join(dir, "c"));
    const link = `${dir}-link`;
    symlinkSync(dir, link);
    try {
      const files = await listFiles(link);
      expect(files.map((file) => [file.name, file.path, file.isDir, file.mode[0]])).toEqual([
        ["a", `${link}/a`, true, "d"],
        ["b.txt", `${link}/b.txt`, false, "-"],
        ["c", `${link}/c`, false, "l"],
      ]);
    } finally {
      rmSync(link);
    }
  });

  it("says a file is not a directory, and a missing path is not found", async () => {
    writeFileSync(join(dir, "file"), "");
    await expect(listFiles(join(dir, "file"))).rejects.toMatchObject({ problem: "not_directory" });
    await expect(listFiles(join(dir, "none"))).rejects.toMatchObject({ problem: "not_found" });
  });
});

describe("changes", () => {
  it("asks before each change, and makes none when refused", async () => {
    writeFileSync(join(dir, "file"), "x");
    mkdirSync(join(dir, "sub"));
    const refused = () => {
      throw new Error("the session ended");
    };
    await expect(deleteFile(join(dir, "file"), refused)).rejects.toThrow("the session ended");
    await expect(deleteDirectory(join(dir, "sub"), refused)).rejects.toThrow("the session ended");
    await expect(createDirectory(join(dir, "new"), "", refused)).rejects.toThrow("the session ended");
    await expect(movePath(join(dir, "file"), join(dir, "moved"), refused)).rejects.toThrow("the session ended");
    expect(readdirSync(dir).sort()).toEqual(["file", "sub"]);
  });

  it("creates a directory with the exact mode, whatever the umask, and leaves an existing one alone", async () => {
    const previous = process.umask(0o077);
    try {
      await createDirectory(join(dir, "a", "b"), "775", allowed);
    } finally {
      process.umask(previous);
    }
    expect(statSync(join(dir, "a", "b")).mode & 0o777).toBe(0o775);
    await createDirectory(join(dir, "a", "b"), "700", allowed);
    expect(statSync(join(dir, "a", "b")).mode & 0o777).toBe(0o775);
  });

  it("never deletes the root directory", async () => {
    await expect(deleteDirectory("/", allowed)).rejects.toMatchObject({ problem: "invalid_path" });
  });

  it("moves a file and a directory across file systems, where rename(2) cannot", async () => {
    const other = mkdtempSync("/dev/shm/change-files-");
    try {
      writeFileSync(join(dir, "file"), "across");
      mkdirSync(join(dir, "tree", "inner"), { recursive: true });
      writeFileSync(join(dir, "tree", "inner", "leaf"), "leaf");
      await movePath(join(dir, "file"), join(other, "file"), allowed);
      await movePath(join(dir, "tree"), join(other, "tree"), allowed);
      expect(readdirSync(dir)).toEqual([]);
      expect(readFileSync(join(other, "file"), "utf8")).toBe("across");
      expect(readFileSync(join(other, "tree", "inner", "leaf"), "utf8")).toBe("leaf");
      expect(readdirSync(other).sort()).toEqual(["file", "tree"]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("refuses to move a directory into itself", async () => {
    mkdirSync(join(dir, "d"));
    await expect(movePath(join(dir, "d"), join(dir, "d", "e"), allowed)).rejects.toMatchObject({
      problem: "invalid_path",
    });
  });
});
