import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectEventually, type InputStack, STEP_TIMEOUT_MS, startInputStack } from "../support/input-stack.ts";

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>type</title></head>
<body>
  <input id="line" autofocus autocomplete="off" spellcheck="false">
  <textarea id="area" autocomplete="off" spellcheck="false"></textarea>
</body></html>`;

/** What the tests touch of the page's text fields (this project type-checks without the DOM library). */
interface TextField {
  value: string;
  ownerDocument: { hasFocus(): boolean; activeElement: unknown };
}

let stack: InputStack;

beforeAll(async () => {
  stack = await startInputStack(PAGE);
});

afterAll(async () => {
  await stack?.stop();
});

/** Empties the field and waits until it has the keyboard focus through Chromium's window. */
async function focus(selector: string): Promise<void> {
  const field = stack.page.locator(selector);
  await field.focus();
  await field.evaluate((el: TextField) => {
    el.value = "";
  });
  await expectEventually(
    () => field.evaluate((el: TextField) => el.ownerDocument.hasFocus() && el.ownerDocument.activeElement === el),
    true,
    `${selector} has the focus`,
  );
}

const typeText = (text: string, delay?: number) =>
  stack.kernel.browsers.computer.typeText(stack.session.session_id, { text, ...(delay !== undefined && { delay }) });
const value = (selector: string) => () => stack.page.locator(selector).inputValue();

describe("type_text through the public API, on a real Chromium", { timeout: 4 * STEP_TIMEOUT_MS }, () => {
  beforeEach(async () => {
    await focus("#line");
  });

  it("types accented Latin, a symbol, right-to-left Hebrew and an emoji exactly", async () => {
    const text = "Grüße, ☺ שלום 👍";
    await typeText(text);
    await expectEventually(value("#line"), text, "the input's value");
  });

  it("types combining marks as they are, without composing them", async () => {
    const text = "e\u0301 a\u0308 n\u0303";
    await typeText(text);
    await expectEventually(value("#line"), text, "the input's value");
  });

  it("types more distinct characters without a key than the spare keycodes hold at once, in order", async () => {
    const text = Array.from({ length: 120 }, (_, index) => String.fromCodePoint(0x4e00 + index * 7)).join("");
    await typeText(text);
    await expectEventually(value("#line"), text, "the input's value");
  });

  it("types with a delay between characters", async () => {
    await typeText("slow ü", 20);
    await expectEventually(value("#line"), "slow ü", "the input's value");
  });

  it("types letters in their own case while Caps Lock is on", async () => {
    await stack.kernel.browsers.computer.pressKey(stack.session.session_id, { keys: ["Caps_Lock"] });
    try {
      await typeText("Hello, World ü");
      await expectEventually(value("#line"), "Hello, World ü", "the input's value");
    } finally {
      await stack.kernel.browsers.computer.pressKey(stack.session.session_id, { keys: ["Caps_Lock"] });
    }
  });

  it("types newlines as Return and tabs as Tab in a textarea", async () => {
    await focus("#area");
    await typeText("one\ntwo\r\nthree");
    await expectEventually(value("#area"), "one\ntwo\nthree", "the textarea's value");
  });

  it("refuses a control character with 400 naming its position, and types nothing", async () => {
    const error = await typeText("ab\u0007c").catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, error: { code: "bad_request" } });
    expect((error as Error).message).toMatch(/text: character 3 \(U\+0007\) cannot be typed/);
    await typeText("z");
    await expectEventually(value("#line"), "z", "only what the next call typed");
  });
});
