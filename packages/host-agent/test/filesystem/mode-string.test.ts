import { constants } from "node:fs";
import { describe, expect, it } from "vitest";
import { modeString } from "../../src/filesystem/mode-string.ts";

const { S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK } = constants;

describe("modeString", () => {
  it.each([
    [S_IFREG | 0o644, "-rw-r--r--"],
    [S_IFDIR | 0o755, "drwxr-xr-x"],
    [S_IFLNK | 0o777, "lrwxrwxrwx"],
    [S_IFIFO | 0o644, "prw-r--r--"],
    [S_IFSOCK | 0o755, "srwxr-xr-x"],
    [S_IFCHR | 0o666, "crw-rw-rw-"],
    [S_IFBLK | 0o660, "brw-rw----"],
  ])("writes the file type letter for mode %o as %s", (mode, expected) => {
    expect(modeString(mode)).toBe(expected);
  });

  it.each([
    [S_IFREG | 0o4755, "-rwsr-xr-x"],
    [S_IFREG | 0o4644, "-rwSr--r--"],
    [S_IFREG | 0o2755, "-rwxr-sr-x"],
    [S_IFREG | 0o2745, "-rwxr-Sr-x"],
    [S_IFDIR | 0o1777, "drwxrwxrwt"],
    [S_IFDIR | 0o1776, "drwxrwxrwT"],
    [S_IFREG | 0o7777, "-rwsrwsrwt"],
    [S_IFREG | 0o7000, "---S--S--T"],
  ])("shows special bits of mode %o as ls does: %s", (mode, expected) => {
    expect(modeString(mode)).toBe(expected);
  });

  it("writes no permission as dashes", () => {
    expect(modeString(S_IFREG)).toBe("----------");
  });
});
