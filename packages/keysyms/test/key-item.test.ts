import { describe, expect, it } from "vitest";
import { parseKeyItem, validateKeyItems } from "../src/index.ts";

const Control_L = 0xffe3;
const Shift_L = 0xffe1;
const Tab = 0xff09;

function keysymsOf(item: string): number[] {
  const parsed = parseKeyItem(item);
  if (!parsed.ok) throw new Error(`${item}: ${parsed.reason}`);
  return parsed.keysyms;
}

function reasonOf(item: string): string {
  const parsed = parseKeyItem(item);
  if (parsed.ok) throw new Error(`${item} parsed as ${parsed.keysyms}`);
  return parsed.reason;
}

describe("parseKeyItem", () => {
  it("reads a keysym name", () => {
    expect(keysymsOf("Return")).toEqual([0xff0d]);
    expect(keysymsOf("XF86AudioPlay")).toEqual([0x1008ff14]);
  });

  it("prefers the exact name and falls back to any case", () => {
    expect(keysymsOf("Agrave")).toEqual([0xc0]);
    expect(keysymsOf("agrave")).toEqual([0xe0]);
    expect(keysymsOf("return")).toEqual([0xff0d]);
    expect(keysymsOf("f5")).toEqual([0xffc2]);
    expect(keysymsOf("xf86audioplay")).toEqual([0x1008ff14]);
  });

  it("reads a single character by code point, named keysym or Unicode keysym", () => {
    expect(keysymsOf("a")).toEqual([0x61]);
    expect(keysymsOf("A")).toEqual([0x41]);
    expect(keysymsOf("é")).toEqual([0xe9]);
    expect(keysymsOf("€")).toEqual([0x20ac]);
    expect(keysymsOf("α")).toEqual([0x7e1]);
    expect(keysymsOf("☺")).toEqual([0x100263a]);
    expect(keysymsOf("😀")).toEqual([0x101f600]);
  });

  it("reads the characters that combinations would otherwise split or trim", () => {
    expect(keysymsOf("+")).toEqual([0x2b]);
    expect(keysymsOf(" ")).toEqual([0x20]);
    expect(keysymsOf("-")).toEqual([0x2d]);
    expect(keysymsOf("\n")).toEqual([0xff0d]);
    expect(keysymsOf("\t")).toEqual([Tab]);
  });

  it("reads combinations with whitespace around + ignored", () => {
    expect(keysymsOf("Ctrl+Shift+Tab")).toEqual([Control_L, Shift_L, Tab]);
    expect(keysymsOf("ctrl + shift + tab")).toEqual([Control_L, Shift_L, Tab]);
    expect(keysymsOf(" Return ")).toEqual([0xff0d]);
  });

  it("maps the modifier aliases in any case", () => {
    expect(keysymsOf("CTRL+a")).toEqual([Control_L, 0x61]);
    expect(keysymsOf("Control+a")).toEqual([Control_L, 0x61]);
    expect(keysymsOf("Alt+a")).toEqual([0xffe9, 0x61]);
    expect(keysymsOf("SHIFT+a")).toEqual([Shift_L, 0x61]);
    expect(keysymsOf("Super+a")).toEqual([0xffeb, 0x61]);
    expect(keysymsOf("Meta+a")).toEqual([0xffe7, 0x61]);
    expect(keysymsOf("Cmd+a")).toEqual([0xffeb, 0x61]);
  });

  it("reads Ctrl+- as Control and minus, and a trailing ++ as plus", () => {
    expect(keysymsOf("Ctrl+-")).toEqual([Control_L, 0x2d]);
    expect(keysymsOf("ctrl++")).toEqual([Control_L, 0x2b]);
    expect(keysymsOf("ctrl + +")).toEqual([Control_L, 0x2b]);
  });

  it("reads the XStringToKeysym numeric forms", () => {
    expect(keysymsOf("U263A")).toEqual([0x100263a]);
    expect(keysymsOf("U00E9")).toEqual([0xe9]);
    expect(keysymsOf("0x1008ff14")).toEqual([0x1008ff14]);
  });

  it("rejects unknown names, naming them", () => {
    expect(reasonOf("Foo")).toBe('unknown key "Foo"');
    expect(reasonOf("Ctrl+Foo")).toBe('unknown key "Foo" in "Ctrl+Foo"');
    expect(reasonOf("Foo+Nope")).toBe('unknown keys "Foo", "Nope" in "Foo+Nope"');
    expect(reasonOf("☺️")).toBe('unknown key "☺️"');
    expect(reasonOf("U110000")).toBe('unknown key "U110000"');
    expect(reasonOf("0x0")).toBe('unknown key "0x0"');
  });

  it("rejects empty keys and empty combination parts", () => {
    expect(reasonOf("")).toBe('empty key ""');
    expect(reasonOf("   ")).toBe('empty key "   "');
    expect(reasonOf("Ctrl+")).toBe('empty key name in "Ctrl+"');
    expect(reasonOf("+a")).toBe('empty key name in "+a"');
    expect(reasonOf("a++b")).toBe('empty key name in "a++b"');
  });

  it("rejects control characters that no key types", () => {
    expect(reasonOf("\u0001")).toBe('unknown key "\\u0001"');
    expect(reasonOf("\u0085")).toBe('unknown key "\u0085"');
  });
});

describe("validateKeyItems", () => {
  it("accepts valid items", () => {
    expect(validateKeyItems("keys", ["a", "Ctrl+t", "Return"])).toEqual([]);
  });

  it("reports every bad item with its field and index", () => {
    expect(validateKeyItems("keys", ["a", "Foo", "Return", "Ctrl+Nope"])).toEqual([
      'keys[1]: unknown key "Foo"',
      'keys[3]: unknown key "Nope" in "Ctrl+Nope"',
    ]);
    expect(validateKeyItems("hold_keys", [""])).toEqual(['hold_keys[0]: empty key ""']);
  });
});
