import { existsSync } from "node:fs";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { describeKeyEvent, type KeyRecorder, startKeyRecorder } from "../../../../test/support/key-recorder.ts";
import { startXvfb, type Xvfb } from "../../../../test/support/xvfb.ts";
import { DisplayUnavailableError, type Keyboard, openKeyboard } from "../../src/keyboard/index.ts";

const logger = pino({ level: "silent" });
const cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serverWithRecorder(display?: string): Promise<{ xvfb: Xvfb; recorder: KeyRecorder }> {
  const xvfb = await startXvfb({ display });
  cleanup.push(() => xvfb.stop());
  const recorder = await startKeyRecorder(xvfb.display);
  cleanup.push(() => recorder.close());
  return { xvfb, recorder };
}

function keyboardOn(display: string): Keyboard {
  const keyboard = openKeyboard({ display, logger });
  cleanup.push(() => keyboard.close());
  return keyboard;
}

async function tapAndRecord(keyboard: Keyboard, recorder: KeyRecorder, key: string): Promise<string[]> {
  await keyboard.press({ keys: [key], durationMs: 0, holdKeys: [] });
  return (await recorder.waitForEvents(2)).map(describeKeyEvent);
}

/**
 * A display no server uses, far above the low numbers that Xvfb -displayfd hands out, so a test file running
 * in parallel cannot take it while this one has its server stopped.
 */
function vacantDisplay(): string {
  for (;;) {
    const number = 2000 + Math.floor(Math.random() * 20_000);
    if (!existsSync(`/tmp/.X${number}-lock`) && !existsSync(`/tmp/.X11-unix/X${number}`)) return `:${number}`;
  }
}

describe("keyboard and the X server's lifetime", () => {
  it("rejects with DisplayUnavailableError saying to install Xvfb when no X server runs", async () => {
    const keyboard = keyboardOn(vacantDisplay());
    const attempt = keyboard.press({ keys: ["a"], durationMs: 0, holdKeys: [] });
    await expect(attempt).rejects.toBeInstanceOf(DisplayUnavailableError);
    await expect(attempt).rejects.toThrow(/apt-get install xvfb.*set DISPLAY/);
    await expect(attempt).rejects.toMatchObject({ keysMayHaveBeenSent: false });
  });

  it("connects on the first press after the X server appears", async () => {
    const display = vacantDisplay();
    const keyboard = keyboardOn(display);
    await expect(keyboard.press({ keys: ["a"], durationMs: 0, holdKeys: [] })).rejects.toThrow(DisplayUnavailableError);
    const { recorder } = await serverWithRecorder(display);
    expect(await tapAndRecord(keyboard, recorder, "b")).toEqual(["press b", "release b"]);
  });

  it("presses again without a new Keyboard after the X server restarts on the same display", async () => {
    const first = await serverWithRecorder(vacantDisplay());
    const keyboard = keyboardOn(first.xvfb.display);
    expect(await tapAndRecord(keyboard, first.recorder, "a")).toEqual(["press a", "release a"]);

    await first.recorder.close();
    await first.xvfb.stop();
    const second = await serverWithRecorder(first.xvfb.display);
    expect(await tapAndRecord(keyboard, second.recorder, "b")).toEqual(["press b", "release b"]);
    expect(await second.recorder.keysDown()).toEqual([]);
  });

  it("rejects with DisplayUnavailableError, saying keys may have been sent, when the X server dies during a hold", async () => {
    const { xvfb, recorder } = await serverWithRecorder(vacantDisplay());
    const keyboard = keyboardOn(xvfb.display);
    const started = performance.now();
    const hold = keyboard.press({ keys: ["a"], durationMs: 60_000, holdKeys: [] });
    const rejected = expect(hold).rejects.toMatchObject({
      name: "DisplayUnavailableError",
      keysMayHaveBeenSent: true,
    });
    await recorder.waitForEvents(1);
    await recorder.close();
    await xvfb.stop();
    await rejected;
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
