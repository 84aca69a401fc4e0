import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { downloadsLink, makeBrowserDir, removeBrowserDir, tmpRoot } from "../../src/browser/profile.ts";

let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "profile-"));
  mkdirSync(join(dataDir, "browsers"));
});

afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(tmpRoot(dataDir), { recursive: true, force: true });
});

describe("a browser's downloads", () => {
  it("go to its own directory without a prompt, which the agent's fixed downloads path leads to", async () => {
    const dir = await makeBrowserDir(dataDir, "one");
    const preferences = JSON.parse(readFileSync(join(dir.profile, "Default", "Preferences"), "utf8"));
    expect(preferences.download).toMatchObject({ default_directory: dir.downloads, prompt_for_download: false });
    expect(readlinkSync(downloadsLink(dataDir))).toBe(dir.downloads);
    await removeBrowserDir(dir);
    expect(existsSync(dir.root)).toBe(false);
    expect(existsSync(downloadsLink(dataDir))).toBe(false);
  });

  it("follow the newest browser: removing an older one leaves the newer one's path alone", async () => {
    const older = await makeBrowserDir(dataDir, "older");
    const newer = await makeBrowserDir(dataDir, "newer");
    expect(readlinkSync(downloadsLink(dataDir))).toBe(newer.downloads);
    await removeBrowserDir(older);
    expect(readlinkSync(downloadsLink(dataDir))).toBe(newer.downloads);
    await removeBrowserDir(newer);
  });

  it("take their path back from a directory made in its place", async () => {
    mkdirSync(join(downloadsLink(dataDir), "inside"), { recursive: true });
    const dir = await makeBrowserDir(dataDir, "one");
    expect(readlinkSync(downloadsLink(dataDir))).toBe(dir.downloads);
    await removeBrowserDir(dir);
  });
});
