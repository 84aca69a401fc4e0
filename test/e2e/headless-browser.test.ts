import { chromium as playwright } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CHROMIUM_PATH } from "../../packages/host-agent/src/config.ts";
import { type System, startSystem } from "../support/system.ts";

/** A host without an X display still gives every session a browser of its own: a headless one. */

let system: System;

beforeAll(async () => {
  system = await startSystem({
    store: "sqlite",
    agentEnv: { DISPLAY: "", AGENT_CHROMIUM_PATH: DEFAULT_CHROMIUM_PATH },
  });
});

afterAll(async () => {
  await system?.stop();
});

describe("a session on a host without a display", () => {
  it("gets a headless Chromium that answers CDP, with its window size as viewport", async () => {
    const res = await system.api(`/browsers/${system.session.id}`);
    const session = (await res.json()) as { cdp_ws_url: string; headless: boolean; viewport: unknown };
    expect(session).toMatchObject({ headless: true, viewport: { width: 1280, height: 800 } });
    // Left connected: closing a browser Playwright reached over CDP would end it, and the session with it.
    const browser = await playwright.connectOverCDP(session.cdp_ws_url);
    const [page] = browser.contexts()[0]?.pages() ?? [];
    const userAgent = await page?.evaluate(
      () => (globalThis as unknown as { navigator: { userAgent: string } }).navigator.userAgent,
    );
    expect(userAgent).toMatch(/HeadlessChrome/);
  });

  it("answers press_key with 503 display_unavailable", async () => {
    const res = await system.api(`/browsers/${system.session.id}/computer/press_key`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ keys: ["a"] }),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: "display_unavailable" });
  });
});
