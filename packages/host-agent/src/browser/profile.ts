import { createHash } from "node:crypto";
import { lstat, mkdir, readlink, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Everything one browser may write: its profile, its downloads and the HOME it runs with (so
 * caches, crash reports and anything else Chromium puts in ~), under one directory of the agent's
 * data directory, and the TMPDIR it runs with (shared memory files, its singleton socket). Deleting
 * both deletes all of it.
 */
export interface BrowserDir {
  root: string;
  profile: string;
  /** Where Chromium saves every download, without asking (see makeBrowserDir). */
  downloads: string;
  /** The agent's fixed path to the downloads of its browser (see downloadsLink). */
  downloadsLink: string;
  home: string;
  /**
   * Not under root: Chromium puts a Unix socket in TMPDIR, and a socket's path may not exceed 107
   * bytes, which a data directory deep in a file system would make it (Chromium then dies at start
   * with "Socket path too long"). So it is a short directory in the system's temporary directory,
   * named after the data directory (tmpRoot) so that the start-up wipe finds it.
   */
  tmp: string;
}

/** Where the agent on `dataDir` puts its browsers' TMPDIRs: short, and its own. */
export function tmpRoot(dataDir: string): string {
  return join(tmpdir(), `bi-${createHash("sha256").update(dataDir).digest("hex").slice(0, 10)}`);
}

/** Where browsers live in the agent's data directory: wiped whole at start-up. */
export function browsersRoot(dataDir: string): string {
  return join(dataDir, "browsers");
}

/**
 * A fixed path, `<data dir>/downloads`, that always leads to the downloads directory of the
 * agent's current browser (the session's, or the warm spare's before a session takes it): a
 * symlink, replaced in one rename for each new browser and removed with the browser's directory.
 * The browser's own directory has a random name; this one can be documented and given to clients.
 */
export function downloadsLink(dataDir: string): string {
  return join(dataDir, "downloads");
}

/**
 * Makes `path` a directory only this process's user can use, or checks that it is one. It sits in
 * the system's shared temporary directory: a directory another user made there first (or a
 * symlink) would let them reach the browsers' sockets and shared memory.
 */
async function privateDirectory(path: string): Promise<void> {
  try {
    await mkdir(path, { mode: 0o700 });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stats = await lstat(path);
  if (!stats.isDirectory() || stats.uid !== process.getuid?.() || (stats.mode & 0o077) !== 0) {
    throw new Error(`${path} is not a private directory of this user; remove it`);
  }
}

/** Creates a new, empty browser directory named `name` under the data directory. */
export async function makeBrowserDir(dataDir: string, name: string): Promise<BrowserDir> {
  const root = join(browsersRoot(dataDir), name);
  const dir: BrowserDir = {
    root,
    profile: join(root, "profile"),
    downloads: join(root, "downloads"),
    downloadsLink: downloadsLink(dataDir),
    home: join(root, "home"),
    tmp: join(tmpRoot(dataDir), name),
  };
  for (const path of [dir.profile, join(dir.profile, "Default"), dir.downloads, dir.home]) {
    await mkdir(path, { recursive: true, mode: 0o700 });
  }
  await privateDirectory(tmpRoot(dataDir));
  await mkdir(dir.tmp, { mode: 0o700 });
  // Downloads land in the session's own folder without a prompt, where the files API finds them
  // and the fence deletes them; a page may start several without Chromium asking whether it may.
  const preferences = {
    download: { default_directory: dir.downloads, prompt_for_download: false, directory_upgrade: true },
    savefile: { default_directory: dir.downloads },
    profile: { default_content_setting_values: { automatic_downloads: 1 } },
  };
  await writeFile(join(dir.profile, "Default", "Preferences"), JSON.stringify(preferences), { mode: 0o600 });
  await pointDownloadsLink(dir);
  return dir;
}

/** The link is made beside its path and renamed over it: it never stops existing or leads elsewhere. */
async function pointDownloadsLink(dir: BrowserDir): Promise<void> {
  const made = join(dir.root, "downloads-link");
  await symlink(dir.downloads, made);
  try {
    await rename(made, dir.downloadsLink);
  } catch {
    // A directory in its place (a files API call made one): the agent's data directory is its own.
    await rm(dir.downloadsLink, { recursive: true, force: true });
    await rename(made, dir.downloadsLink);
  }
}

export async function removeBrowserDir(dir: BrowserDir): Promise<void> {
  // Only while it leads to this browser: a newer browser's link is its own.
  const target = await readlink(dir.downloadsLink).catch(() => undefined);
  if (target === dir.downloads) await unlink(dir.downloadsLink).catch(() => undefined);
  await rm(dir.root, { recursive: true, force: true, maxRetries: 3 });
  await rm(dir.tmp, { recursive: true, force: true, maxRetries: 3 });
}
