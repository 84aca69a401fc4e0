import { describe, expect, it } from "vitest";
import { isModifierKeysym, keysymFromName, keysymName } from "../src/index.ts";
import { KEYSYM_TABLE } from "../src/keysym-table.ts";

describe("keysym names", () => {
  it("holds every keysymdef.h name and the XF86 keysyms", () => {
    expect(KEYSYM_TABLE.length).toBeGreaterThan(2400);
    expect(keysymFromName("VoidSymbol")).toBe(0xffffff);
    expect(keysymFromName("braille_dots_1234678")).toBe(0x10028ef);
    expect(keysymFromName("XF86AudioPlay")).toBe(0x1008ff14);
    expect(keysymFromName("XF86MonBrightnessUp")).toBe(0x1008ff02);
  });

  it("computes the _EVDEVK keysyms of XF86keysym.h", () => {
    expect(keysymFromName("XF86BrightnessAuto")).toBe(0x10081000 + 0xf4);
  });

  it("names a keysym by its first, non-deprecated spelling", () => {
    expect(keysymName(0xff0d)).toBe("Return");
    expect(keysymName(0x27)).toBe("apostrophe");
    expect(keysymName(0x100263a)).toBeUndefined();
  });

  it("knows which keysyms are modifiers", () => {
    expect(isModifierKeysym(0xffe1)).toBe(true);
    expect(isModifierKeysym(0xffe7)).toBe(true);
    expect(isModifierKeysym(0xfe03)).toBe(true);
    expect(isModifierKeysym(0xff7f)).toBe(true);
    expect(isModifierKeysym(0x61)).toBe(false);
    expect(isModifierKeysym(0xff0d)).toBe(false);
  });
});
