import { describe, expect, it } from "vitest";
import { FileInfoError, fileInfo, normalizeAbsolutePath } from "../../src/filesystem/file-info.ts";

describe("normalizeAbsolutePath", () => {
  it("resolves dot segments and drops a trailing slash", () => {
    expect(normalizeAbsolutePath("/tmp/./a/../b/")).toBe("/tmp/b");
  });

  it("keeps the root as /", () => {
    expect(normalizeAbsolutePath("/")).toBe("/");
    expect(normalizeAbsolutePath("/../..")).toBe("/");
  });

  it("refuses a relative path", () => {
    expect(() => normalizeAbsolutePath("tmp")).toThrow(FileInfoError);
  });

  it("refuses a NUL byte", () => {
    expect(() => normalizeAbsolutePath("/tmp/\0")).toThrow(FileInfoError);
  });
});

describe("fileInfo", () => {
  it.each([
    ["/no/such/file", "not_found"],
    ["/etc/hostname/below", "not_found"],
    [`/${"x".repeat(5000)}`, "invalid_path"],
  ])("classifies %s as %s", async (path, problem) => {
    await expect(fileInfo(path)).rejects.toMatchObject({ problem });
  });
});
