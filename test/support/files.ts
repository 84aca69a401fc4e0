import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Every byte of every file under `dir`, read as Latin-1 so any text in it shows. A file that
 * vanishes between the listing and the read (PostgreSQL's data directory is shared by every test
 * file, which create and drop databases) is gone from the disk and cannot hold anything.
 */
export function filesUnder(dir: string): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    try {
      files.push({ path, text: readFileSync(path).toString("latin1") });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return files;
}
