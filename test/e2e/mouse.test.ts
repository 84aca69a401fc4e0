import Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import {
  expectEventually,
  type InputStack,
  STEP_TIMEOUT_MS,
  screenPoint,
  startInputStack,
} from "../support/input-stack.ts";

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>mouse</title></head>
<body style="margin:0; height:4000px">
  <button id="target" style="position:absolute; left:100px; top:100px; width:160px; height:60px">target</button>
  <input id="slider" type="range" min="0" max="100" value="0"
         style="position:absolute; left:100px; top:260px; width:400px; margin:0">
  <script>
    window.events = [];
    const target = document.getElementById("target");
    for (const type of ["click", "dblclick", "mousedown", "mouseup"]) {
      target.addEventListener(type, (event) => events.push(type + " " + event.button + " " + event.detail));
    }
    // A right click would open Chromium's menu, which grabs the pointer.
    target.addEventListener("contextmenu", (event) => event.preventDefault());
  </script>
</body></html>`;

/** What the tests read of the page (this project type-checks without the DOM library). */
interface PageState {
  events: string[];
  scrollY: number;
  scrollTo(x: number, y: number): void;
  document: { getElementById(id: string): { value: string } };
}

let stack: InputStack;

beforeAll(async () => {
  stack = await startInputStack(PAGE);
});

afterAll(async () => {
  await stack?.stop();
});

beforeEach(async () => {
  await stack.page.evaluate(() => {
    (globalThis as unknown as PageState).events.length = 0;
    (globalThis as unknown as PageState).scrollTo(0, 0);
    (globalThis as unknown as PageState).document.getElementById("slider").value = "0";
  });
});

const computer = () => stack.kernel.browsers.computer;
const id = () => stack.session.session_id;
const events = () => stack.page.evaluate(() => [...(globalThis as unknown as PageState).events]);

describe("the mouse through the public API, on a real Chromium", { timeout: 4 * STEP_TIMEOUT_MS }, () => {
  it("clicks at a button's screen coordinates and fires its click handler", async () => {
    const at = await screenPoint(stack.page.locator("#target"));
    await computer().clickMouse(id(), at);
    await expectEventually(events, ["mousedown 0 1", "mouseup 0 1", "click 0 1"], "the button's events");
  });

  it("double-clicks: the page sees a dblclick", async () => {
    // Away from where the test before clicked, or Chromium would count on from that click.
    const at = await screenPoint(stack.page.locator("#target"), { x: 0.15, y: 0.5 });
    await computer().clickMouse(id(), { ...at, num_clicks: 2 });
    await expectEventually(
      events,
      ["mousedown 0 1", "mouseup 0 1", "click 0 1", "mousedown 0 2", "mouseup 0 2", "click 0 2", "dblclick 0 2"],
      "a double click's events",
    );
  });

  it("presses and releases the right button in two calls (click_type down, then up)", async () => {
    const at = await screenPoint(stack.page.locator("#target"));
    await computer().clickMouse(id(), { ...at, button: "right", click_type: "down" });
    expect((await stack.pointer()).buttonsDown).toEqual([3]);
    await computer().clickMouse(id(), { ...at, button: "right", click_type: "up" });
    await expectEventually(events, ["mousedown 2 1", "mouseup 2 1"], "the right button's events");
    expect((await stack.pointer()).buttonsDown).toEqual([]);
  });

  it("drags a range input's thumb to the right end", async () => {
    const slider = stack.page.locator("#slider");
    const from = await screenPoint(slider, { x: 0.01, y: 0.5 });
    const to = await screenPoint(slider, { x: 1, y: 0.5 });
    await computer().dragMouse(id(), {
      path: [
        [from.x, from.y],
        [to.x, to.y],
      ],
    });
    await expectEventually(() => slider.inputValue(), "100", "the slider's value");
    expect((await stack.pointer()).buttonsDown).toEqual([]);
  });

  it("drags smoothly along a path of three points", async () => {
    const slider = stack.page.locator("#slider");
    const from = await screenPoint(slider, { x: 0.01, y: 0.5 });
    const middle = await screenPoint(slider, { x: 0.8, y: 0.5 });
    const to = await screenPoint(slider, { x: 0.5, y: 0.5 });
    await computer().dragMouse(id(), {
      path: [
        [from.x, from.y],
        [middle.x, middle.y],
        [to.x, to.y],
      ],
      smooth: true,
    });
    await expectEventually(() => slider.inputValue(), "50", "the slider's value");
  });

  it("scrolls the page down and back up with the wheel", async () => {
    await computer().scroll(id(), { x: 600, y: 500, delta_y: 5 });
    await expect
      .poll(() => stack.page.evaluate(() => (globalThis as unknown as PageState).scrollY), { timeout: STEP_TIMEOUT_MS })
      .toBeGreaterThan(0);
    await computer().scroll(id(), { x: 600, y: 500, delta_y: -50 });
    await expectEventually(
      () => stack.page.evaluate(() => (globalThis as unknown as PageState).scrollY),
      0,
      "scrollY back at the top",
    );
  });

  it("moves the pointer, at once or smoothly, and get_mouse_position reports where it is", async () => {
    await computer().moveMouse(id(), { x: 321, y: 234 });
    expect(await computer().getMousePosition(id())).toEqual({ x: 321, y: 234 });
    await computer().moveMouse(id(), { x: 700, y: 500, smooth: true, duration_ms: 200 });
    expect(await computer().getMousePosition(id())).toEqual({ x: 700, y: 500 });
    expect(await stack.pointer()).toMatchObject({ x: 700, y: 500 });
  });

  it("refuses a point outside the screen with 400 and moves nothing", async () => {
    await computer().moveMouse(id(), { x: 10, y: 10 });
    const error = await computer()
      .moveMouse(id(), { x: 1024, y: 10 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, error: { code: "bad_request" } });
    expect(String((error as Error).message)).toMatch(/outside the screen \(1024x768\)/);
    expect(await computer().getMousePosition(id())).toEqual({ x: 10, y: 10 });
  });

  it("leaves no button down when the client cancels a drag in the middle", async () => {
    const controller = new AbortController();
    const drag = computer().dragMouse(
      id(),
      {
        path: [
          [100, 600],
          [900, 600],
        ],
        steps_per_segment: 100,
        step_delay_ms: 50,
      },
      { signal: controller.signal },
    );
    await expect.poll(async () => (await stack.pointer()).buttonsDown, { timeout: STEP_TIMEOUT_MS }).toEqual([1]);
    controller.abort();
    await expect(drag).rejects.toThrow();
    await expect.poll(async () => (await stack.pointer()).buttonsDown, { timeout: STEP_TIMEOUT_MS }).toEqual([]);
  });
});

describe("request validation", () => {
  it.each([
    ["click_mouse", "a fractional x", { x: 1.5, y: 2 }, /^x: must be a whole number/],
    ["click_mouse", "a negative y", { x: 1, y: -1 }, /^y: must be at least 0/],
    ["click_mouse", "an unknown button", { x: 1, y: 1, button: "side" }, /^button: must be one of/],
    ["click_mouse", "num_clicks over the bound", { x: 1, y: 1, num_clicks: 11 }, /^num_clicks: must be at most 10/],
    [
      "click_mouse",
      "two clicks with click_type down",
      { x: 1, y: 1, click_type: "down", num_clicks: 2 },
      /^num_clicks: /,
    ],
    ["click_mouse", "an unknown hold key", { x: 1, y: 1, hold_keys: ["Hyperdrive"] }, /^hold_keys\[0\]: /],
    ["drag_mouse", "a path of one point", { path: [[1, 1]] }, /^path: must have at least 2 points/],
    ["drag_mouse", "a point that is not a pair", { path: [[1, 1], [2]] }, /^path\[1\]/],
    ["scroll", "too many wheel clicks", { x: 1, y: 1, delta_y: 501 }, /^delta_y: must be at most 500/],
    ["type", "empty text", { text: "" }, /^text: must not be empty/],
    ["type", "a delay over the bound", { text: "a", delay: 300_001 }, /^delay: must be at most 300000/],
    ["type", "delays adding up past the bound", { text: "abcdefghijk", delay: 30_001 }, /would wait 300010 ms/],
  ])("%s refuses %s with 400 and does nothing", async (path, _case, body, message) => {
    const res = await fetch(`${stack.gateway.url}/browsers/${id()}/computer/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.kernel.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    const error = (await res.json()) as { code: string; details: { message: string }[] };
    expect(error.code).toBe("bad_request");
    expect(error.details[0]?.message).toMatch(message);
    expect(await events()).toEqual([]);
  });
});

describe("the session's scope", { timeout: 4 * STEP_TIMEOUT_MS }, () => {
  it("answers 404 to another organization, and clicks nothing", async () => {
    const { key } = await createApiKey(stack.store, "org-other", "not the session's owner");
    const other = new Kernel({ apiKey: key, baseURL: stack.gateway.url, maxRetries: 0 });
    const at = await screenPoint(stack.page.locator("#target"));
    for (const call of [
      () => other.browsers.computer.clickMouse(id(), at),
      () => other.browsers.computer.moveMouse(id(), at),
      () => other.browsers.computer.getMousePosition(id()),
      () => other.browsers.computer.typeText(id(), { text: "x" }),
    ]) {
      await expect(call()).rejects.toMatchObject({ status: 404, error: { code: "not_found" } });
    }
    expect(await events()).toEqual([]);
  });

  it("releases a button held down when the session stops, and answers 404 once it ended", async () => {
    const at = await screenPoint(stack.page.locator("#target"));
    await computer().clickMouse(id(), { ...at, click_type: "down" });
    expect((await stack.pointer()).buttonsDown).toEqual([1]);
    await stack.kernel.browsers.deleteByID(id());
    expect((await stack.pointer()).buttonsDown).toEqual([]);
    await expect(computer().clickMouse(id(), at)).rejects.toMatchObject({ status: 404 });
    await expect(computer().getMousePosition(id())).rejects.toMatchObject({ status: 404 });
  });
});
