import Kernel, { AuthenticationError, BadRequestError, NotFoundError } from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type System, startSystem } from "../support/system.ts";

let system: System;
let kernel: Kernel;

beforeAll(async () => {
  system = await startSystem({ store: "sqlite" });
  kernel = new Kernel({ apiKey: system.apiKey, baseURL: system.gateway.url, maxRetries: 0 });
});

afterAll(async () => {
  await system?.stop();
});

describe("@onkernel/sdk browsers.fs.fileInfo, unmodified, against the gateway", () => {
  it("returns the file information record of /tmp", async () => {
    const info = await kernel.browsers.fs.fileInfo(system.session.name, { path: "/tmp" });
    expect(info).toMatchObject({ name: "tmp", path: "/tmp", is_dir: true, mode: "drwxrwxrwt", size_bytes: 0 });
    expect(Number.isNaN(Date.parse(info.mod_time))).toBe(false);
  });

  it("raises NotFoundError for a missing path", async () => {
    await expect(kernel.browsers.fs.fileInfo(system.session.name, { path: "/no/such/path" })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it("raises BadRequestError for a relative path", async () => {
    await expect(kernel.browsers.fs.fileInfo(system.session.name, { path: "relative" })).rejects.toBeInstanceOf(
      BadRequestError,
    );
  });

  it("raises AuthenticationError for a wrong key", async () => {
    const stranger = new Kernel({ apiKey: "sk_wrong", baseURL: system.gateway.url, maxRetries: 0 });
    await expect(stranger.browsers.fs.fileInfo(system.session.name, { path: "/" })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });
});
