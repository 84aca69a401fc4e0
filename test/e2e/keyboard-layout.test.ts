import { afterAll, beforeAll, beforeEach, describe, it } from "vitest";
import { expectEventually, type InputStack, STEP_TIMEOUT_MS, startInputStack } from "../support/input-stack.ts";

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>layout</title></head>
<body><input id="line" autofocus autocomplete="off" spellcheck="false"></body></html>`;

/** What the tests touch of the page's input (this project type-checks without the DOM library). */
interface TextField {
  value: string;
  ownerDocument: { hasFocus(): boolean; activeElement: unknown };
}

let stack: InputStack;

beforeAll(async () => {
  // German: y and z swapped, @ on AltGr+q (level 3), ä a key of its own, ^ and ` dead keys.
  stack = await startInputStack(PAGE, { AGENT_KEYBOARD_LAYOUT: "de" });
});

afterAll(async () => {
  await stack?.stop();
});

const input = () => stack.page.locator("#line");
const value = () => input().inputValue();

beforeEach(async () => {
  await input().focus();
  await input().evaluate((el: TextField) => {
    el.value = "";
  });
  await expectEventually(
    () => input().evaluate((el: TextField) => el.ownerDocument.hasFocus() && el.ownerDocument.activeElement === el),
    true,
    "the input has the focus",
  );
});

describe("AGENT_KEYBOARD_LAYOUT=de on a real Chromium", { timeout: 4 * STEP_TIMEOUT_MS }, () => {
  it("press_key y, z, @ and ä type exactly those characters", async () => {
    await stack.kernel.browsers.computer.pressKey(stack.session.session_id, { keys: ["y", "z", "@", "ä"] });
    await expectEventually(value, "yz@ä", "the input's value");
  });

  it("type_text yz@ä types exactly that", async () => {
    await stack.kernel.browsers.computer.typeText(stack.session.session_id, { text: "yz@ä" });
    await expectEventually(value, "yz@ä", "the input's value");
  });

  it("type_text of characters on dead keys and Shift levels types them as they are", async () => {
    const text = "^°`´ZY§$%&/()=?ÄÖÜß€|{}[]~\\";
    await stack.kernel.browsers.computer.typeText(stack.session.session_id, { text });
    await expectEventually(value, text, "the input's value");
  });
});
