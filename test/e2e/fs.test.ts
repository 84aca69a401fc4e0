import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Kernel, { BadRequestError, ConflictError, NotFoundError, PermissionDeniedError } from "@onkernel/sdk";
import { type Browser, type CDPSession, type Page, chromium as playwright } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { downloadsLink } from "../../packages/host-agent/src/browser/profile.ts";
import { DEFAULT_CHROMIUM_PATH as CHROMIUM_PATH } from "../../packages/host-agent/src/config.ts";
import { type System, startSystem } from "../support/system.ts";

/**
 * The files API of a session as a computer-use agent uses it, end to end: the official client
 * against the gateway, a host agent with its own Xvfb and Debian's Chromium, driven with
 * Playwright over the session's cdp_ws_url. Downloads land in the session's downloads directory
 * and come back byte for byte; a written file is what an upload form sends; every call is the
 * session's own, and a write cut short by the session's end leaves nothing.
 */

const STEP_TIMEOUT_MS = 15_000;
/** Small, so that a body over it is cheap to send; larger than every file the test writes. */
const MAX_UPLOAD_BYTES = 8 * 1024 * 1024;
const DOWNLOAD = randomBytes(3 * 1024 * 1024 + 17);
const DOWNLOAD_NAME = "report.bin";

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>files</title></head>
<body>
  <a id="download" href="/${DOWNLOAD_NAME}">download</a>
  <input id="file" type="file">
  <button id="send" onclick="fetch('/upload', { method: 'POST', body: document.getElementById('file').files[0] })">send</button>
</body></html>`;

let system: System;
let kernel: Kernel;
let agentDataDir: string;
/** A directory of the test's own on the host: the agent and the test run on one machine. */
let scratch: string;
let pageServer: Server;
let pageUrl: string;
/** What the loopback server received from the page's upload form, one per upload. */
const uploads: Buffer[] = [];
let browser: Browser | undefined;

beforeAll(async () => {
  agentDataDir = mkdtempSync(join(tmpdir(), "fs-agent-"));
  scratch = mkdtempSync(join(tmpdir(), "fs-scratch-"));
  pageServer = createServer((req, res) => {
    if (req.method === "POST" && req.url === "/upload") {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        uploads.push(Buffer.concat(chunks));
        res.writeHead(204).end();
      });
      return;
    }
    if (req.url === `/${DOWNLOAD_NAME}`) {
      res.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-disposition": `attachment; filename="${DOWNLOAD_NAME}"`,
        "content-length": DOWNLOAD.length,
      });
      res.end(DOWNLOAD);
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, "127.0.0.1", resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
  system = await startSystem({
    store: "sqlite",
    agentEnv: { AGENT_XVFB: "1280x800x24", AGENT_CHROMIUM_PATH: CHROMIUM_PATH, AGENT_DATA_DIR: agentDataDir },
    gatewayEnv: { MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) },
  });
  kernel = new Kernel({ apiKey: system.apiKey, baseURL: system.gateway.url, maxRetries: 0 });
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await system?.stop();
  await new Promise((resolve) => pageServer?.close(resolve));
  rmSync(agentDataDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** The session's browser over its cdp_ws_url (connected once), and its one tab. */
async function sessionTab(): Promise<{ browser: Browser; page: Page }> {
  if (!browser) {
    const session = await kernel.browsers.retrieve(system.session.id);
    browser = await playwright.connectOverCDP(session.cdp_ws_url, { timeout: STEP_TIMEOUT_MS });
  }
  const page = browser.contexts()[0]?.pages()[0];
  if (!page) throw new Error("the session's browser has no tab");
  return { browser, page };
}

function downloadDone(cdp: CDPSession): Promise<{ state: string; filePath?: string }> {
  return new Promise((resolve) => {
    cdp.on("Browser.downloadProgress", (event) => {
      if (event.state !== "inProgress") resolve(event as { state: string; filePath?: string });
    });
  });
}

async function bytesOf(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

describe("files of a session, through @onkernel/sdk", () => {
  it("finds a file the page downloaded in the session's downloads directory and reads it back byte for byte", async () => {
    const { browser, page } = await sessionTab();
    const cdp = await browser.newBrowserCDPSession();
    // Playwright points downloads at a folder of its own when it connects; "default" gives them
    // back to the browser's own setting: the session's downloads directory, without a prompt.
    await cdp.send("Browser.setDownloadBehavior", { behavior: "default", eventsEnabled: true });
    await page.goto(pageUrl);
    const done = downloadDone(cdp);
    await page.click("#download");
    const downloads = downloadsLink(agentDataDir);
    // Chromium names the file's path on the host, under the browser's own directory.
    expect(await done).toMatchObject({
      state: "completed",
      filePath: expect.stringMatching(new RegExp(`^${agentDataDir}/browsers/[^/]+/downloads/${DOWNLOAD_NAME}$`)),
    });

    const listed = await kernel.browsers.fs.listFiles(system.session.id, { path: downloads });
    expect(listed).toEqual([
      expect.objectContaining({
        name: DOWNLOAD_NAME,
        path: `${downloads}/${DOWNLOAD_NAME}`,
        is_dir: false,
        size_bytes: DOWNLOAD.length,
      }),
    ]);
    const response = await kernel.browsers.fs.readFile(system.session.id, { path: `${downloads}/${DOWNLOAD_NAME}` });
    expect(response.headers.get("content-type")).toBe("application/octet-stream");
    expect(response.headers.get("content-length")).toBe(String(DOWNLOAD.length));
    expect((await bytesOf(response)).equals(DOWNLOAD)).toBe(true);
  });

  it("writes a file that an <input type=file> of the page then uploads intact", async () => {
    const contents = randomBytes(2 * 1024 * 1024 + 5);
    const path = join(scratch, "to-upload", "form.bin");
    await kernel.browsers.fs.writeFile(system.session.id, contents, { path });
    const { page } = await sessionTab();
    await page.goto(pageUrl);
    // The path on the host, given to Chromium itself: what it uploads is what write_file wrote.
    const cdp = await page.context().newCDPSession(page);
    const { root } = await cdp.send("DOM.getDocument");
    const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector: "#file" });
    await cdp.send("DOM.setFileInputFiles", { nodeId, files: [path] });
    await page.click("#send");
    await expect.poll(() => uploads.length, { timeout: STEP_TIMEOUT_MS }).toBe(1);
    expect(uploads[0]?.equals(contents)).toBe(true);
  });

  it("writes with the mode asked for, replaces a file whole, and leaves no temporary file", async () => {
    const path = join(scratch, "modes", "secret.txt");
    await kernel.browsers.fs.writeFile(system.session.id, "first version, longer than the second", {
      path,
      mode: "600",
    });
    await kernel.browsers.fs.writeFile(system.session.id, "second", { path, mode: "0640" });
    expect(await kernel.browsers.fs.fileInfo(system.session.id, { path })).toMatchObject({
      mode: "-rw-r-----",
      size_bytes: 6,
    });
    expect((await bytesOf(await kernel.browsers.fs.readFile(system.session.id, { path }))).toString()).toBe("second");
    expect(readdirSync(join(scratch, "modes"))).toEqual(["secret.txt"]);
    const empty = join(scratch, "modes", "empty");
    await kernel.browsers.fs.writeFile(system.session.id, "", { path: empty });
    expect((await bytesOf(await kernel.browsers.fs.readFile(system.session.id, { path: empty }))).length).toBe(0);
  });

  it("creates, moves and deletes files and directories", async () => {
    const id = system.session.id;
    const tree = join(scratch, "tree");
    await kernel.browsers.fs.createDirectory(id, { path: `${tree}/a/b`, mode: "750" });
    // As mkdir -p: an existing directory is left as it is.
    await kernel.browsers.fs.createDirectory(id, { path: `${tree}/a/b` });
    expect(await kernel.browsers.fs.fileInfo(id, { path: `${tree}/a/b` })).toMatchObject({
      is_dir: true,
      mode: "drwxr-x---",
    });
    await kernel.browsers.fs.writeFile(id, "moved", { path: `${tree}/a/b/one.txt` });
    await kernel.browsers.fs.move(id, { src_path: `${tree}/a/b/one.txt`, dest_path: `${tree}/a/two.txt` });
    expect((await kernel.browsers.fs.listFiles(id, { path: `${tree}/a` })).map((file) => file.name)).toEqual([
      "b",
      "two.txt",
    ]);
    expect((await bytesOf(await kernel.browsers.fs.readFile(id, { path: `${tree}/a/two.txt` }))).toString()).toBe(
      "moved",
    );
    await kernel.browsers.fs.move(id, { src_path: `${tree}/a/b`, dest_path: `${tree}/c` });
    await kernel.browsers.fs.deleteFile(id, { path: `${tree}/a/two.txt` });
    expect(await kernel.browsers.fs.listFiles(id, { path: `${tree}/a` })).toEqual([]);
    await kernel.browsers.fs.writeFile(id, "deep", { path: `${tree}/c/d/e.txt` });
    await kernel.browsers.fs.deleteDirectory(id, { path: tree });
    expect(existsSync(tree)).toBe(false);
  });

  it("answers each problem with file_info's statuses, and 409 for what is in the way", async () => {
    const id = system.session.id;
    const base = join(scratch, "errors");
    await kernel.browsers.fs.writeFile(id, "x", { path: `${base}/file.txt` });
    await kernel.browsers.fs.createDirectory(id, { path: `${base}/dir` });
    await kernel.browsers.fs.writeFile(id, "y", { path: `${base}/dir/inside.txt` });
    await kernel.browsers.fs.createDirectory(id, { path: `${base}/other` });
    const fs = kernel.browsers.fs;
    const cases: [string, () => Promise<unknown>, unknown][] = [
      ["list_files of a missing directory", () => fs.listFiles(id, { path: `${base}/none` }), NotFoundError],
      ["list_files of a file", () => fs.listFiles(id, { path: `${base}/file.txt` }), ConflictError],
      ["list_files of a relative path", () => fs.listFiles(id, { path: "tmp" }), BadRequestError],
      ["read_file of a missing file", () => fs.readFile(id, { path: `${base}/none` }), NotFoundError],
      ["read_file of a directory", () => fs.readFile(id, { path: `${base}/dir` }), ConflictError],
      ["read_file of a path with a NUL", () => fs.readFile(id, { path: `${base}/a\0b` }), BadRequestError],
      ["write_file onto a directory", () => fs.writeFile(id, "z", { path: `${base}/dir` }), ConflictError],
      ["write_file below a file", () => fs.writeFile(id, "z", { path: `${base}/file.txt/z` }), ConflictError],
      [
        "write_file with a mode not octal",
        () => fs.writeFile(id, "z", { path: `${base}/m`, mode: "999" }),
        BadRequestError,
      ],
      ["delete_file of a directory", () => fs.deleteFile(id, { path: `${base}/dir` }), ConflictError],
      ["delete_file of a missing file", () => fs.deleteFile(id, { path: `${base}/none` }), NotFoundError],
      ["delete_directory of a file", () => fs.deleteDirectory(id, { path: `${base}/file.txt` }), ConflictError],
      ["delete_directory of a missing one", () => fs.deleteDirectory(id, { path: `${base}/none` }), NotFoundError],
      ["create_directory where a file is", () => fs.createDirectory(id, { path: `${base}/file.txt` }), ConflictError],
      [
        "create_directory refused by the kernel",
        () => fs.createDirectory(id, { path: "/sys/fs-test" }),
        PermissionDeniedError,
      ],
      ["create_directory with a relative path", () => fs.createDirectory(id, { path: "x" }), BadRequestError],
      [
        "move of a missing source",
        () => fs.move(id, { src_path: `${base}/none`, dest_path: `${base}/n` }),
        NotFoundError,
      ],
      [
        "move of a file onto a directory",
        () => fs.move(id, { src_path: `${base}/file.txt`, dest_path: `${base}/dir` }),
        ConflictError,
      ],
      [
        "move onto a directory that is not empty",
        () => fs.move(id, { src_path: `${base}/other`, dest_path: `${base}/dir` }),
        ConflictError,
      ],
    ];
    for (const [what, call, expected] of cases) {
      await expect(call(), what).rejects.toBeInstanceOf(expected);
    }
    // Nothing of it changed what was there.
    expect(readdirSync(base).sort()).toEqual(["dir", "file.txt", "other"]);
    expect(readdirSync(join(base, "dir"))).toEqual(["inside.txt"]);
  });

  it("refuses a body over MAX_UPLOAD_BYTES with 413, by its Content-Length or as it streams, and writes nothing", async () => {
    const id = system.session.id;
    const path = join(scratch, "big", "too-large.bin");
    const tooLarge = randomBytes(MAX_UPLOAD_BYTES + 1);
    await expect(kernel.browsers.fs.writeFile(id, tooLarge, { path })).rejects.toMatchObject({ status: 413 });
    // Without a Content-Length (chunked), the gateway stops it once it passes the limit.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < tooLarge.length; offset += 1024 * 1024) {
          controller.enqueue(tooLarge.subarray(offset, offset + 1024 * 1024));
        }
        controller.close();
      },
    });
    const response = await system.api(`/browsers/${id}/fs/write_file?path=${encodeURIComponent(path)}`, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { code: string }).code).toBe("payload_too_large");
    expect(existsSync(join(scratch, "big")) ? readdirSync(join(scratch, "big")) : []).toEqual([]);
  });

  it("answers 404 for every call on another organization's session", async () => {
    const { key } = await createApiKey(system.store, "org-fs-stranger", "stranger");
    const stranger = new Kernel({ apiKey: key, baseURL: system.gateway.url, maxRetries: 0 });
    const path = join(scratch, "stranger.txt");
    for (const [what, call] of everyCall(stranger, system.session.id, path)) {
      await expect(call(), what).rejects.toBeInstanceOf(NotFoundError);
    }
    expect(existsSync(path)).toBe(false);
  });
});

/** Every call of the files API, each on `path` or beside it. */
function everyCall(client: Kernel, id: string, path: string): [string, () => Promise<unknown>][] {
  const fs = client.browsers.fs;
  return [
    ["list_files", () => fs.listFiles(id, { path: scratch })],
    ["read_file", () => fs.readFile(id, { path })],
    ["write_file", () => fs.writeFile(id, "nope", { path })],
    ["delete_file", () => fs.deleteFile(id, { path })],
    ["delete_directory", () => fs.deleteDirectory(id, { path })],
    ["create_directory", () => fs.createDirectory(id, { path })],
    ["move", () => fs.move(id, { src_path: path, dest_path: `${path}.moved` })],
  ];
}

describe("a session's end", () => {
  it("cuts a write in progress short and leaves no file, then every call answers 404", async () => {
    const id = system.session.id;
    const target = join(scratch, "cut");
    const path = join(target, "half.bin");
    let push!: (chunk: Uint8Array | null) => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => (chunk ? controller.enqueue(chunk) : controller.close());
      },
    });
    const answer = system.api(`/browsers/${id}/fs/write_file?path=${encodeURIComponent(path)}`, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body,
      duplex: "half",
    } as RequestInit);
    push(randomBytes(1024 * 1024));
    // The agent is writing: its temporary file is there, the file is not.
    await expect
      .poll(() => (existsSync(target) ? readdirSync(target) : []), { timeout: STEP_TIMEOUT_MS })
      .toEqual([expect.stringMatching(/^\.write-[0-9a-f]+\.partial$/)]);

    await kernel.browsers.deleteByID(id);
    // The fence removed the temporary file before the stop was confirmed.
    expect(readdirSync(target)).toEqual([]);
    push(randomBytes(1024));
    push(null);
    const response = await answer;
    expect(response.status).toBe(404);
    expect(readdirSync(target)).toEqual([]);

    for (const [what, call] of everyCall(kernel, id, path)) {
      await expect(call(), what).rejects.toBeInstanceOf(NotFoundError);
    }
    expect(readdirSync(target)).toEqual([]);
  });
});
