import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { describeKeyEvent, type KeyRecorder, startKeyRecorder } from "../../../../test/support/key-recorder.ts";
import { startXvfb, type Xvfb } from "../../../../test/support/xvfb.ts";
import {
  InvalidKeysError,
  type Keyboard,
  openKeyboard,
  PressInterruptedError,
  type PressRequest,
} from "../../src/keyboard/index.ts";
import { X11Connection } from "../../src/keyboard/x11-client.ts";

const PAUSE = 0xff13;

let xvfb: Xvfb;
let recorder: KeyRecorder;
let keyboard: Keyboard;
/** The keyboard map before any press: spare keycodes bound for a while must come back to it. */
let cleanMap: number[][];

/** Spare keycodes stay bound for five seconds after the last press that used them, then the map is restored. */
async function expectMapRestored(): Promise<void> {
  await expect.poll(() => recorder.keyboardMapping(), { timeout: 15_000 }).toEqual(cleanMap);
}

beforeAll(async () => {
  xvfb = await startXvfb();
  recorder = await startKeyRecorder(xvfb.display);
  keyboard = openKeyboard({ display: xvfb.display, logger: pino({ level: "silent" }) });
  cleanMap = await recorder.keyboardMapping();
});

afterAll(async () => {
  await keyboard?.close();
  await recorder?.close();
  await xvfb?.stop();
});

beforeEach(() => recorder.clear());

/** Presses, then returns everything the focused window received up to a marker key pressed after it. */
async function pressed(request: Partial<PressRequest> & Pick<PressRequest, "keys">): Promise<string[]> {
  await keyboard.press({ durationMs: 0, holdKeys: [], ...request });
  // The server has processed the events when press() resolves, but the window gets them a little later.
  await keyboard.press({ keys: ["Pause"], durationMs: 0, holdKeys: [] });
  const events = await recorder.waitUntil((received) => {
    const last = received.at(-1);
    return last?.type === "release" && last.keysym === PAUSE;
  });
  return events.slice(0, -2).map(describeKeyEvent);
}

describe("keyboard press sequences on a real X server", () => {
  it("taps Return", async () => {
    expect(await pressed({ keys: ["Return"] })).toEqual(["press Return", "release Return"]);
  });

  it("taps a", async () => {
    expect(await pressed({ keys: ["a"] })).toEqual(["press a", "release a"]);
  });

  it("taps A with Shift held around it", async () => {
    expect(await pressed({ keys: ["A"] })).toEqual([
      "press Shift_L",
      "press A (Shift)",
      "release A (Shift)",
      "release Shift_L (Shift)",
    ]);
  });

  it("taps ! with Shift held around it", async () => {
    expect(await pressed({ keys: ["!"] })).toEqual([
      "press Shift_L",
      "press exclam (Shift)",
      "release exclam (Shift)",
      "release Shift_L (Shift)",
    ]);
  });

  it("taps Ctrl+t", async () => {
    expect(await pressed({ keys: ["Ctrl+t"] })).toEqual([
      "press Control_L",
      "press t (Control)",
      "release t (Control)",
      "release Control_L (Control)",
    ]);
  });

  const ctrlShiftTab = [
    "press Control_L",
    "press Shift_L (Control)",
    "press ISO_Left_Tab (Shift+Control)",
    "release ISO_Left_Tab (Shift+Control)",
    "release Shift_L (Shift+Control)",
    "release Control_L (Control)",
  ];

  it("taps Ctrl+Shift+Tab", async () => {
    expect(await pressed({ keys: ["Ctrl+Shift+Tab"] })).toEqual(ctrlShiftTab);
  });

  it("ignores whitespace and case in ctrl + shift + tab", async () => {
    expect(await pressed({ keys: ["ctrl + shift + tab"] })).toEqual(ctrlShiftTab);
  });

  it("reads Ctrl+- as Control and minus", async () => {
    expect(await pressed({ keys: ["Ctrl+-"] })).toEqual([
      "press Control_L",
      "press minus (Control)",
      "release minus (Control)",
      "release Control_L (Control)",
    ]);
  });

  it("taps F5", async () => {
    expect(await pressed({ keys: ["F5"] })).toEqual(["press F5", "release F5"]);
  });

  it("taps XF86AudioPlay", async () => {
    expect(await pressed({ keys: ["XF86AudioPlay"] })).toEqual(["press XF86AudioPlay", "release XF86AudioPlay"]);
  });

  it("taps é", async () => {
    expect(await pressed({ keys: ["é"] })).toEqual(["press eacute", "release eacute"]);
  });

  it("taps each item in order", async () => {
    expect(await pressed({ keys: ["h", "i", "Return"] })).toEqual([
      "press h",
      "release h",
      "press i",
      "release i",
      "press Return",
      "release Return",
    ]);
  });

  it("binds ☺, which no key has, to a spare keycode and restores the keyboard map exactly once input is idle", async () => {
    expect(cleanMap.flat()).not.toContain(0x100263a);
    expect(await pressed({ keys: ["☺"] })).toEqual(["press U+263A", "release U+263A"]);
    await expectMapRestored();
  });

  it("types more distinct unmapped characters than there are spare keycodes", async () => {
    const before = cleanMap;
    const spare = before.filter((row) => row.every((keysym) => keysym === 0)).length;
    const characters = Array.from({ length: spare + 5 }, (_, index) => String.fromCodePoint(0x4e00 + index));
    const events = await pressed({ keys: characters });
    expect(events).toEqual(
      characters.flatMap((character) => {
        const name = `U+${character.codePointAt(0)?.toString(16).toUpperCase()}`;
        return [`press ${name}`, `release ${name}`];
      }),
    );
    await expectMapRestored();
  });

  it("follows a keyboard map change that another client announces with MappingNotify", async () => {
    const before = cleanMap;
    const rowOf = (keycode: number) => before[keycode - 8] ?? [];
    const other = await X11Connection.open(xvfb.display);
    // Swap the rows of keycode 38 (a) and 24 (q), so "a" now lives on keycode 24.
    other.changeKeyboardMapping(24, rowOf(24).length, rowOf(38));
    other.changeKeyboardMapping(38, rowOf(38).length, rowOf(24));
    await other.sync();
    try {
      // An empty press is one round trip, by the end of which the keyboard has read the MappingNotify.
      await keyboard.press({ keys: [], durationMs: 0, holdKeys: [] });
      expect(await pressed({ keys: ["a"] })).toEqual(["press a", "release a"]);
      expect(recorder.events[0]?.keycode).toBe(24);
    } finally {
      other.changeKeyboardMapping(24, rowOf(24).length, rowOf(24));
      other.changeKeyboardMapping(38, rowOf(38).length, rowOf(38));
      await other.sync();
      await other.close();
    }
    await expectMapRestored();
  });

  it("presses hold_keys first and releases them last", async () => {
    expect(await pressed({ keys: ["a", "b"], holdKeys: ["Shift"] })).toEqual([
      "press Shift_L",
      "press A (Shift)",
      "release A (Shift)",
      "press B (Shift)",
      "release B (Shift)",
      "release Shift_L (Shift)",
    ]);
  });

  it("holds all keys for durationMs, measured by the X server, then releases them in reverse", async () => {
    await keyboard.press({ keys: ["a", "Ctrl+b"], durationMs: 300, holdKeys: [] });
    expect(await recorder.keysDown()).toEqual([]);
    const events = await recorder.waitForEvents(6);
    expect(events.map(describeKeyEvent)).toEqual([
      "press a",
      "press Control_L",
      "press b (Control)",
      "release b (Control)",
      "release Control_L (Control)",
      "release a",
    ]);
    const lastPress = events[2]?.time ?? Number.NaN;
    const firstRelease = events[3]?.time ?? Number.NaN;
    expect(firstRelease - lastPress).toBeGreaterThanOrEqual(300);
  });

  it("cuts a hold short and releases its keys when releaseAll is called", async () => {
    const hold = keyboard.press({ keys: ["a"], durationMs: 60_000, holdKeys: ["Shift"] });
    const interrupted = expect(hold).rejects.toBeInstanceOf(PressInterruptedError);
    await recorder.waitForEvents(2);
    await keyboard.releaseAll();
    await interrupted;
    expect(await recorder.keysDown()).toEqual([]);
    expect((await recorder.waitForEvents(4)).map(describeKeyEvent)).toEqual([
      "press Shift_L",
      "press A (Shift)",
      "release A (Shift)",
      "release Shift_L (Shift)",
    ]);
  });

  it("releases keys that another client left down when releaseAll is called", async () => {
    const other = await X11Connection.open(xvfb.display);
    await other.enableXTest();
    other.fakeKey(true, 38);
    await other.sync();
    await other.close();
    expect(await recorder.keysDown()).toEqual([38]);
    await keyboard.releaseAll();
    expect(await recorder.keysDown()).toEqual([]);
    expect((await recorder.waitForEvents(2)).map(describeKeyEvent)).toEqual(["press a", "release a"]);
  });

  it("sends no event at all when one key in the middle of the list is unknown", async () => {
    const attempt = keyboard.press({ keys: ["a", "NoSuchKey", "b"], durationMs: 0, holdKeys: [] });
    await expect(attempt).rejects.toBeInstanceOf(InvalidKeysError);
    await expect(attempt).rejects.toMatchObject({ problems: ['keys[1]: unknown key "NoSuchKey"'] });
    expect(await pressed({ keys: [] })).toEqual([]);
  });

  it("never interleaves two concurrent presses", async () => {
    const first = keyboard.press({ keys: ["a", "b", "c"], durationMs: 0, holdKeys: [] });
    const second = keyboard.press({ keys: ["x", "y", "z"], durationMs: 0, holdKeys: [] });
    await Promise.all([first, second]);
    expect(await pressed({ keys: [] })).toEqual(
      ["a", "b", "c", "x", "y", "z"].flatMap((key) => [`press ${key}`, `release ${key}`]),
    );
  });

  it("leaves no key down after the suite", async () => {
    expect(await recorder.keysDown()).toEqual([]);
  });
});
