import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import Kernel, { BadRequestError, NotFoundError } from "@onkernel/sdk";
import { type Page, chromium as playwright } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { DEFAULT_CHROMIUM_PATH } from "../../packages/host-agent/src/config.ts";
import { X11Connection } from "../../packages/host-agent/src/keyboard/x11-client.ts";
import { type System, startSystem } from "../support/system.ts";

/**
 * POST /browsers/{id_or_name}/computer/screenshot through the official client, on a real stack:
 * the agent's own Xvfb and Debian's Chromium (read with X GetImage), and a headless Chromium on a
 * host without a display (read through CDP). The page is one solid colour with a square of another
 * at a known place; the PNG is decoded and its pixels checked.
 */

const SCREEN = { width: 1024, height: 768 };
/** Screenshots taken while waiting for Chromium to paint the page, 100 ms apart. */
const PAINT_ATTEMPTS = 100;
const BACKGROUND: Rgb = [32, 160, 96];
const SQUARE_COLOUR: Rgb = [230, 40, 200];
/** Where the square is in the page's viewport, in CSS pixels (1 device pixel each). */
const SQUARE = { left: 200, top: 150, width: 400, height: 300 };

type Rgb = [number, number, number];

const PAGE = `<!doctype html>
<html>
  <head><meta charset="utf-8"><title>screenshot</title>
  <style>
    html, body { margin: 0; height: 100%; overflow: hidden; background: rgb(${BACKGROUND.join(",")}); }
    #square { position: fixed; left: ${SQUARE.left}px; top: ${SQUARE.top}px; width: ${SQUARE.width}px;
              height: ${SQUARE.height}px; background: rgb(${SQUARE_COLOUR.join(",")}); }
  </style></head>
  <body><div id="square"></div></body>
</html>
`;

let pageServer: Server;
let pageUrl: string;

beforeAll(async () => {
  pageServer = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(PAGE));
  await new Promise<void>((resolve) => pageServer.listen(0, "127.0.0.1", resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => pageServer?.close(() => resolve()));
});

interface Decoded {
  width: number;
  height: number;
  at(x: number, y: number): Rgb;
}

async function decode(response: Response): Promise<Decoded> {
  expect(response.headers.get("content-type")).toBe("image/png");
  const png = Buffer.from(await response.arrayBuffer());
  // The PNG signature: the bytes are the image itself, not JSON or base64.
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    at: (x, y) => {
      const offset = (y * info.width + x) * info.channels;
      return [data[offset], data[offset + 1], data[offset + 2]] as Rgb;
    },
  };
}

/** The session's one tab, on the test page, rendered. */
async function openPage(cdpWsUrl: string): Promise<Page> {
  // Left connected: closing a browser Playwright reached over CDP would end it, and the session with it.
  const browser = await playwright.connectOverCDP(cdpWsUrl);
  const [page] = browser.contexts()[0]?.pages() ?? [];
  if (!page) throw new Error("the session's browser has no tab");
  await page.goto(pageUrl);
  await page.bringToFront();
  return page;
}

async function cdpWsUrlOf(system: System): Promise<string> {
  const res = await system.api(`/browsers/${system.session.id}`);
  return ((await res.json()) as { cdp_ws_url: string }).cdp_ws_url;
}

describe("screenshots of a session on a host with an X display", () => {
  let system: System;
  let kernel: Kernel;
  /** The square's top-left corner on the screen. */
  let square: { x: number; y: number };

  beforeAll(async () => {
    system = await startSystem({
      store: "sqlite",
      agentEnv: {
        AGENT_XVFB: `${SCREEN.width}x${SCREEN.height}x24`,
        AGENT_CHROMIUM_PATH: DEFAULT_CHROMIUM_PATH,
      },
    });
    kernel = new Kernel({ apiKey: system.apiKey, baseURL: system.gateway.url, maxRetries: 0 });
    const page = await openPage(await cdpWsUrlOf(system));
    // No window manager: the window covers the screen from its top-left corner, and the page starts
    // below Chromium's toolbar (and its infobars), whose height is what the window has beyond the page.
    const origin = await page.evaluate(() => {
      const w = globalThis as unknown as Record<"screenX" | "screenY" | "outerHeight" | "innerHeight", number>;
      return { x: w.screenX, y: w.screenY + w.outerHeight - w.innerHeight };
    });
    square = { x: origin.x + SQUARE.left, y: origin.y + SQUARE.top };
    // The page is painted once a screenshot shows the square.
    for (let attempt = 1; ; attempt++) {
      const shot = await decode(await kernel.browsers.computer.captureScreenshot(system.session.name));
      const centre = shot.at(square.x + SQUARE.width / 2, square.y + SQUARE.height / 2);
      if (centre.join() === SQUARE_COLOUR.join()) break;
      if (attempt === PAINT_ATTEMPTS) throw new Error(`the square never showed: ${centre.join()} at its centre`);
      await sleep(100);
    }
  });

  afterAll(async () => {
    await system?.stop();
  });

  it("answers the whole screen as a PNG of the screen's size, with the page's colours where they are", async () => {
    const shot = await decode(await kernel.browsers.computer.captureScreenshot(system.session.name));
    expect({ width: shot.width, height: shot.height }).toEqual(SCREEN);
    const inside = [
      [square.x, square.y],
      [square.x + SQUARE.width - 1, square.y + SQUARE.height - 1],
      [square.x + SQUARE.width / 2, square.y + SQUARE.height / 2],
    ];
    for (const [x, y] of inside) expect(shot.at(x as number, y as number)).toEqual(SQUARE_COLOUR);
    const outside = [
      [square.x - 1, square.y],
      [square.x, square.y - 1],
      [square.x + SQUARE.width, square.y + SQUARE.height - 1],
      [square.x + SQUARE.width + 100, square.y + SQUARE.height + 100],
    ];
    for (const [x, y] of outside) expect(shot.at(x as number, y as number)).toEqual(BACKGROUND);
  });

  it("answers a region with the region's size and content", async () => {
    // The square's top-left corner, 10 pixels of the background above it and to its left.
    const region = { x: square.x - 10, y: square.y - 10, width: 50, height: 40 };
    const shot = await decode(await kernel.browsers.computer.captureScreenshot(system.session.id, { region }));
    expect({ width: shot.width, height: shot.height }).toEqual({ width: 50, height: 40 });
    expect(shot.at(0, 0)).toEqual(BACKGROUND);
    expect(shot.at(9, 39)).toEqual(BACKGROUND);
    expect(shot.at(49, 9)).toEqual(BACKGROUND);
    expect(shot.at(10, 10)).toEqual(SQUARE_COLOUR);
    expect(shot.at(49, 39)).toEqual(SQUARE_COLOUR);
  });

  it("answers a region that is the whole screen", async () => {
    const region = { x: 0, y: 0, ...SCREEN };
    const shot = await decode(await kernel.browsers.computer.captureScreenshot(system.session.id, { region }));
    expect({ width: shot.width, height: shot.height }).toEqual(SCREEN);
    expect(shot.at(square.x, square.y)).toEqual(SQUARE_COLOUR);
  });

  it("refuses a region not inside the screen with 400 saying so", async () => {
    const region = { x: SCREEN.width - 10, y: 0, width: 11, height: 10 };
    const error = await kernel.browsers.computer.captureScreenshot(system.session.id, { region }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).error).toMatchObject({
      code: "bad_request",
      message: expect.stringMatching(
        new RegExp(`^region: 11×10 at \\(${SCREEN.width - 10}, 0\\) is not inside the screen \\(1024×768\\)`),
      ),
    });
  });

  it.each([
    ["a fractional coordinate", { x: 1.5, y: 0, width: 10, height: 10 }, /^region\.x: must be a whole number/],
    ["a negative coordinate", { x: 0, y: -1, width: 10, height: 10 }, /^region\.y: must be at least 0/],
    ["an empty region", { x: 0, y: 0, width: 0, height: 10 }, /^region\.width: must be at least 1/],
    ["a missing height", { x: 0, y: 0, width: 10 }, /^region\.height: required/],
    ["a size as a string", { x: 0, y: 0, width: "10", height: 10 }, /^region\.width: must be a number/],
  ])("refuses %s in the region with 400 naming the field", async (_what, region, message) => {
    const error = await kernel.browsers.computer.captureScreenshot(system.session.id, { region: region as never }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).error).toMatchObject({ message: expect.stringMatching(message) });
  });

  it("answers 404 for another organization's session", async () => {
    const { key } = await createApiKey(system.store, "org-screenshot-stranger", "stranger");
    const stranger = new Kernel({ apiKey: key, baseURL: system.gateway.url, maxRetries: 0 });
    await expect(stranger.browsers.computer.captureScreenshot(system.session.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(stranger.browsers.computer.captureScreenshot(system.session.name)).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it("answers 404 for a session its host does not run", async () => {
    // Known to the store as active, but never started on the agent (which runs another session).
    const orphan = await system.newSession(system.organizationId, "orphan", system.agent.address);
    const error = await kernel.browsers.computer.captureScreenshot(orphan.id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).error).toMatchObject({ message: expect.stringMatching(/has ended/) });
  });

  it("answers 404 once the session has ended", async () => {
    await kernel.browsers.deleteByID(system.session.id);
    await expect(kernel.browsers.computer.captureScreenshot(system.session.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("screenshots of a session on a host without a display (headless browser, through CDP)", () => {
  let system: System;
  let kernel: Kernel;
  /** The page's viewport: what a headless browser shows (its window less the toolbar it does not draw). */
  let viewport: { width: number; height: number };

  beforeAll(async () => {
    system = await startSystem({
      store: "sqlite",
      agentEnv: { DISPLAY: "", AGENT_CHROMIUM_PATH: DEFAULT_CHROMIUM_PATH },
    });
    kernel = new Kernel({ apiKey: system.apiKey, baseURL: system.gateway.url, maxRetries: 0 });
    const page = await openPage(await cdpWsUrlOf(system));
    viewport = await page.evaluate(() => {
      const w = globalThis as unknown as Record<"innerWidth" | "innerHeight", number>;
      return { width: w.innerWidth, height: w.innerHeight };
    });
  });

  afterAll(async () => {
    await system?.stop();
  });

  it("answers the page's viewport, with the page's colours where they are", async () => {
    const shot = await decode(await kernel.browsers.computer.captureScreenshot(system.session.name));
    expect({ width: shot.width, height: shot.height }).toEqual(viewport);
    expect(shot.at(SQUARE.left, SQUARE.top)).toEqual(SQUARE_COLOUR);
    expect(shot.at(SQUARE.left + SQUARE.width - 1, SQUARE.top + SQUARE.height - 1)).toEqual(SQUARE_COLOUR);
    expect(shot.at(SQUARE.left - 1, SQUARE.top)).toEqual(BACKGROUND);
    expect(shot.at(SQUARE.left + SQUARE.width, SQUARE.top + SQUARE.height)).toEqual(BACKGROUND);
  });

  it("answers a region with the region's size and content", async () => {
    const region = { x: SQUARE.left - 10, y: SQUARE.top - 10, width: 50, height: 40 };
    const shot = await decode(await kernel.browsers.computer.captureScreenshot(system.session.id, { region }));
    expect({ width: shot.width, height: shot.height }).toEqual({ width: 50, height: 40 });
    expect(shot.at(0, 0)).toEqual(BACKGROUND);
    expect(shot.at(10, 10)).toEqual(SQUARE_COLOUR);
    expect(shot.at(49, 39)).toEqual(SQUARE_COLOUR);
  });

  it("refuses a region not inside the window with 400", async () => {
    const region = { x: 0, y: viewport.height - 5, width: 10, height: 6 };
    const error = await kernel.browsers.computer.captureScreenshot(system.session.id, { region }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).error).toMatchObject({ message: expect.stringMatching(/not inside the screen/) });
  });

  it("answers 404 once the session has ended", async () => {
    await kernel.browsers.deleteByID(system.session.id);
    await expect(kernel.browsers.computer.captureScreenshot(system.session.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe.each([
  // RGB565: 2 bytes a pixel, rows padded to 4 bytes (the region below is 107 pixels wide).
  { depth: 16, red: 0xf800 },
  // 10 bits a channel in 4 bytes.
  { depth: 30, red: 0x3ff00000 },
])("screenshots of a $depth-bit screen", ({ depth, red }) => {
  let system: System;
  let kernel: Kernel;
  let x: X11Connection;

  beforeAll(async () => {
    // No browser: a red window of our own on the agent's own Xvfb, over its root's black and white
    // weave, which is never pure red.
    system = await startSystem({ store: "sqlite", agentEnv: { AGENT_XVFB: `640x480x${depth}` } });
    kernel = new Kernel({ apiKey: system.apiKey, baseURL: system.gateway.url, maxRetries: 0 });
    const listening = await system.agent.waitForLog((line) => line.msg === "listening");
    const previous = process.env.XAUTHORITY;
    process.env.XAUTHORITY = String(listening.xauthority);
    try {
      x = await X11Connection.open(String(listening.display));
    } finally {
      if (previous === undefined) delete process.env.XAUTHORITY;
      else process.env.XAUTHORITY = previous;
    }
    const window = x.raw.AllocID();
    x.raw.CreateWindow(window, x.root, 10, 20, 101, 50, 0, 0, 0, 0, { backgroundPixel: red });
    x.raw.MapWindow(window);
    await x.sync();
  });

  afterAll(async () => {
    await x?.close();
    await system?.stop();
  });

  it("answers the screen's pixels in 8-bit RGB", async () => {
    const shot = await decode(await kernel.browsers.computer.captureScreenshot(system.session.id));
    expect({ width: shot.width, height: shot.height }).toEqual({ width: 640, height: 480 });
    expect(shot.at(10, 20)).toEqual([255, 0, 0]);
    expect(shot.at(110, 69)).toEqual([255, 0, 0]);
    const region = await decode(
      await kernel.browsers.computer.captureScreenshot(system.session.id, {
        region: { x: 5, y: 15, width: 107, height: 7 },
      }),
    );
    expect({ width: region.width, height: region.height }).toEqual({ width: 107, height: 7 });
    expect(region.at(5, 5)).toEqual([255, 0, 0]);
    expect(region.at(105, 6)).toEqual([255, 0, 0]);
    expect(region.at(106, 6)).not.toEqual([255, 0, 0]);
    expect(region.at(4, 6)).not.toEqual([255, 0, 0]);
  });
});
