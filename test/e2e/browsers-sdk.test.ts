import Kernel, { ConflictError, InternalServerError, NotFoundError } from "@onkernel/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { describeKeyEvent, type KeyRecorder, startKeyRecorder } from "../support/key-recorder.ts";
import { type AgentProcess, startAgent } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";
import { startXvfb, type Xvfb } from "../support/xvfb.ts";

let xvfb: Xvfb;
let recorder: KeyRecorder;
let system: System;
let agent: AgentProcess;
let kernel: Kernel;
let created: string[] = [];

beforeAll(async () => {
  xvfb = await startXvfb();
  recorder = await startKeyRecorder(xvfb.display);
  system = await startSystem({ store: "sqlite", agentEnv: { DISPLAY: xvfb.display } });
  // The system's own agent is held by its `local` session; this one is free for the SDK's sessions.
  agent = await startAgent({ DISPLAY: xvfb.display });
  await system.addHost(agent.address);
  kernel = new Kernel({ apiKey: system.apiKey, baseURL: system.gateway.url, maxRetries: 0 });
});

afterEach(async () => {
  for (const id of created) await kernel.browsers.deleteByID(id).catch(() => undefined);
  created = [];
  recorder.clear();
});

afterAll(async () => {
  await agent?.stop();
  await system?.stop();
  await recorder?.close();
  await xvfb?.stop();
});

async function create(params: Kernel.BrowserCreateParams = {}) {
  const session = await kernel.browsers.create(params);
  created.push(session.session_id);
  return session;
}

describe("@onkernel/sdk browsers, unmodified, against the gateway", () => {
  it("creates a session with the requested name, timeout and tags on a host with a display", async () => {
    const session = await create({ name: "sdk", timeout_seconds: 120, tags: { suite: "sdk" } });
    expect(session).toMatchObject({
      name: "sdk",
      headless: false,
      stealth: false,
      timeout_seconds: 120,
      tags: { suite: "sdk" },
      viewport: { width: 1024, height: 768 },
    });
  });

  it("retrieves the created session by name and by id", async () => {
    const session = await create({ name: "sdk" });
    expect(await kernel.browsers.retrieve("sdk")).toEqual(session);
    expect(await kernel.browsers.retrieve(session.session_id)).toEqual(session);
  });

  it("lists every session, page after page, with auto-pagination", async () => {
    const session = await create();
    const listed: string[] = [];
    for await (const item of kernel.browsers.list({ limit: 1 })) listed.push(item.session_id);
    expect(listed).toEqual([system.session.id, session.session_id]);
  });

  it("deletes the session, after which retrieve raises NotFoundError unless include_deleted", async () => {
    const session = await create({ name: "sdk" });
    await kernel.browsers.deleteByID("sdk");
    await expect(kernel.browsers.retrieve(session.session_id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await kernel.browsers.retrieve(session.session_id, { include_deleted: true })).toMatchObject({
      session_id: session.session_id,
      deleted_at: expect.any(String),
    });
  });

  it("presses keys and reads file information on the created session", async () => {
    const session = await create();
    await kernel.browsers.computer.pressKey(session.session_id, { keys: ["Ctrl+a"] });
    const events = await recorder.waitForEvents(4);
    expect(events.map(describeKeyEvent)).toEqual([
      "press Control_L",
      "press a (Control)",
      "release a (Control)",
      "release Control_L (Control)",
    ]);
    expect(await kernel.browsers.fs.fileInfo(session.session_id, { path: "/tmp" })).toMatchObject({
      name: "tmp",
      is_dir: true,
    });
  });

  it("raises NotFoundError for press_key and file_info on a deleted session", async () => {
    const session = await create();
    await kernel.browsers.deleteByID(session.session_id);
    await expect(kernel.browsers.computer.pressKey(session.session_id, { keys: ["a"] })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(kernel.browsers.fs.fileInfo(session.session_id, { path: "/" })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("raises ConflictError for a name an active session has", async () => {
    await expect(create({ name: system.session.name })).rejects.toBeInstanceOf(ConflictError);
  });

  it("raises a 503 error when every host is busy", async () => {
    await create();
    const error = await create().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503 });
  });
});
