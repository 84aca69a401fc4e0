import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type System, startSystem } from "../support/system.ts";

let system: System;
let dir: string;
let socketServer: Server;

beforeAll(async () => {
  system = await startSystem({ store: "sqlite" });
  dir = mkdtempSync(join(tmpdir(), "file-info-"));
  writeFileSync(join(dir, "regular.txt"), "hello, file_info\n");
  chmodSync(join(dir, "regular.txt"), 0o644);
  mkdirSync(join(dir, "subdir"));
  chmodSync(join(dir, "subdir"), 0o755);
  writeFileSync(join(dir, "setuid"), "#!/bin/sh\n");
  chmodSync(join(dir, "setuid"), 0o4755);
  writeFileSync(join(dir, "setuid-noexec"), "x");
  chmodSync(join(dir, "setuid-noexec"), 0o4644);
  mkdirSync(join(dir, "setgid-dir"));
  chmodSync(join(dir, "setgid-dir"), 0o2755);
  symlinkSync(join(dir, "subdir"), join(dir, "link-to-dir"));
  execFileSync("mkfifo", ["-m", "0644", join(dir, "fifo")]);
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(join(dir, "socket"), resolve));
});

afterAll(async () => {
  socketServer?.close();
  await system?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function fileInfo(path: string | undefined, session = system.session.name): Promise<Response> {
  const query = path === undefined ? "" : `?path=${encodeURIComponent(path)}`;
  return system.api(`/browsers/${encodeURIComponent(session)}/fs/file_info${query}`);
}

async function expectRecord(path: string): Promise<Record<string, unknown>> {
  const res = await fileInfo(path);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function expectInvalidInput(res: Response, field: string): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { code: string; details: { code: string; message: string }[] };
  expect(body.code).toBe("bad_request");
  expect(body.details).toHaveLength(1);
  expect(body.details[0]?.code).toBe("invalid_input");
  expect(body.details[0]?.message).toMatch(new RegExp(`^${field}: `));
}

describe("GET /browsers/{id_or_name}/fs/file_info", () => {
  it("reports a regular file with its exact size and -rw-r--r--", async () => {
    const record = await expectRecord(join(dir, "regular.txt"));
    expect(record).toMatchObject({
      name: "regular.txt",
      path: join(dir, "regular.txt"),
      is_dir: false,
      size_bytes: 17,
      mode: "-rw-r--r--",
    });
  });

  it("reports mod_time equal to the file's mtime to the nanosecond", async () => {
    const path = join(dir, "regular.txt");
    const record = await expectRecord(path);
    const mtimeNs = lstatSync(path, { bigint: true }).mtimeNs;
    const match = /^(.{19})(?:\.(\d{1,9}))?Z$/.exec(record.mod_time as string);
    expect(match).not.toBeNull();
    const seconds = BigInt(Date.parse(`${match?.[1]}Z`) / 1000);
    const nanos = BigInt((match?.[2] ?? "").padEnd(9, "0") || "0");
    expect(seconds * 1_000_000_000n + nanos).toBe(mtimeNs);
  });

  it("reports a directory with size 0 and is_dir true", async () => {
    const record = await expectRecord(join(dir, "subdir"));
    expect(record).toMatchObject({ name: "subdir", is_dir: true, size_bytes: 0, mode: "drwxr-xr-x" });
  });

  it("reports /tmp with the sticky bit as drwxrwxrwt", async () => {
    const record = await expectRecord("/tmp");
    expect(record).toMatchObject({ name: "tmp", path: "/tmp", is_dir: true, mode: "drwxrwxrwt" });
  });

  it("reports the root as name /", async () => {
    const record = await expectRecord("/");
    expect(record).toMatchObject({ name: "/", path: "/", is_dir: true, size_bytes: 0 });
  });

  it("reports a setuid executable as -rwsr-xr-x", async () => {
    expect((await expectRecord(join(dir, "setuid"))).mode).toBe("-rwsr-xr-x");
  });

  it("reports setuid without owner execute as -rwSr--r--", async () => {
    expect((await expectRecord(join(dir, "setuid-noexec"))).mode).toBe("-rwSr--r--");
  });

  it("reports a setgid directory as drwxr-sr-x", async () => {
    expect((await expectRecord(join(dir, "setgid-dir"))).mode).toBe("drwxr-sr-x");
  });

  it("reports a symlink to a directory as the link itself", async () => {
    const target = join(dir, "subdir");
    const record = await expectRecord(join(dir, "link-to-dir"));
    expect(record).toMatchObject({ mode: "lrwxrwxrwx", is_dir: false, size_bytes: Buffer.byteLength(target) });
  });

  it("reports a FIFO with type p", async () => {
    expect((await expectRecord(join(dir, "fifo"))).mode).toBe("prw-r--r--");
  });

  it("reports a Unix socket with type s", async () => {
    expect((await expectRecord(join(dir, "socket"))).mode).toMatch(/^srw/);
  });

  it("normalizes the path it reports", async () => {
    const record = await expectRecord(`${dir}/subdir/../regular.txt`);
    expect(record.path).toBe(join(dir, "regular.txt"));
  });

  it("answers 404 not_found for a missing path", async () => {
    const res = await fileInfo(join(dir, "missing"));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "not_found" });
  });

  it("answers 404 when a path component is not a directory", async () => {
    const res = await fileInfo(join(dir, "regular.txt", "below"));
    expect(res.status).toBe(404);
  });

  it("refuses a relative path with an invalid_input detail", async () => {
    await expectInvalidInput(await fileInfo("etc/passwd"), "path");
  });

  it("refuses an absent path parameter with an invalid_input detail", async () => {
    await expectInvalidInput(await fileInfo(undefined), "path");
  });

  it("refuses a path with a NUL byte with an invalid_input detail", async () => {
    await expectInvalidInput(await fileInfo("/tmp/a\0b"), "path");
  });

  it("refuses a path given twice with an invalid_input detail", async () => {
    const res = await system.api(`/browsers/${system.session.name}/fs/file_info?path=/tmp&path=/etc`);
    await expectInvalidInput(res, "path");
  });

  it("refuses a path longer than the system allows with 400", async () => {
    const res = await fileInfo(`/${"a".repeat(5000)}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "bad_request" });
  });

  it("resolves the session by id as well as by name", async () => {
    const res = await fileInfo("/", system.session.id);
    expect(res.status).toBe(200);
  });

  it("answers 404 not_found for an unknown session", async () => {
    const res = await fileInfo("/", "no-such-session");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "not_found" });
  });

  it("answers 404 for a session of another organization", async () => {
    const other = await system.newSession("another-org", "theirs", system.agent.address);
    for (const idOrName of [other.id, other.name]) {
      const res = await fileInfo("/", idOrName);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: "not_found" });
    }
  });
});
