import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Everything one browser may write, under one directory of the agent's data directory: its
 * profile, its downloads, and the HOME and TMPDIR it runs with (so caches, crash reports, shared
 * memory files and anything else Chromium puts in ~ or /tmp are in it too). Deleting the directory
 * deletes all of it.
 */
export interface BrowserDir {
  root: string;
  profile: string;
  downloads: string;
  home: string;
  tmp: string;
}

/** Where browsers live in the agent's data directory: wiped whole at start-up. */
export function browsersRoot(dataDir: string): string {
  return join(dataDir, "browsers");
}

/** Creates a new, empty browser directory named `name` under the data directory. */
export async function makeBrowserDir(dataDir: string, name: string): Promise<BrowserDir> {
  const root = join(browsersRoot(dataDir), name);
  const dir: BrowserDir = {
    root,
    profile: join(root, "profile"),
    downloads: join(root, "downloads"),
    home: join(root, "home"),
    tmp: join(root, "tmp"),
  };
  for (const path of [dir.profile, join(dir.profile, "Default"), dir.downloads, dir.home, dir.tmp]) {
    await mkdir(path, { recursive: true, mode: 0o700 });
  }
  // Downloads land in the session's own folder without a prompt, where file_info finds them and
  // the fence deletes them.
  const preferences = {
    download: { default_directory: dir.downloads, prompt_for_download: false, directory_upgrade: true },
    savefile: { default_directory: dir.downloads },
  };
  await writeFile(join(dir.profile, "Default", "Preferences"), JSON.stringify(preferences), { mode: 0o600 });
  return dir;
}

export async function removeBrowserDir(dir: BrowserDir): Promise<void> {
  await rm(dir.root, { recursive: true, force: true, maxRetries: 3 });
}
