import { constants } from "node:fs";

const { S_IFMT, S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK } = constants;

const TYPE_CHARS = new Map<number, string>([
  [S_IFREG, "-"],
  [S_IFDIR, "d"],
  [S_IFLNK, "l"],
  [S_IFIFO, "p"],
  [S_IFSOCK, "s"],
  [S_IFCHR, "c"],
  [S_IFBLK, "b"],
]);

const SETUID = 0o4000;
const SETGID = 0o2000;
const STICKY = 0o1000;

/** One rwx triplet; `special` replaces the execute slot as ls does (s/S, t/T). */
function triplet(bits: number, special: boolean, specialChar: "s" | "t"): string {
  const read = bits & 0o4 ? "r" : "-";
  const write = bits & 0o2 ? "w" : "-";
  const exec = bits & 0o1;
  let x: string;
  if (special) x = exec ? specialChar : specialChar.toUpperCase();
  else x = exec ? "x" : "-";
  return read + write + x;
}

/** The ten-character mode column of `ls -l` for an st_mode value. */
export function modeString(mode: number): string {
  const type = TYPE_CHARS.get(mode & S_IFMT) ?? "?";
  return (
    type +
    triplet((mode >> 6) & 0o7, (mode & SETUID) !== 0, "s") +
    triplet((mode >> 3) & 0o7, (mode & SETGID) !== 0, "s") +
    triplet(mode & 0o7, (mode & STICKY) !== 0, "t")
  );
}
