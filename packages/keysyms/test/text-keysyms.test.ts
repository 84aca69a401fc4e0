import { describe, expect, it } from "vitest";
import { textKeysyms } from "../src/index.ts";

describe("textKeysyms", () => {
  it("maps each code point: Latin-1 as itself, legacy keysyms where X has them, else 0x01000000 + code point", () => {
    expect(textKeysyms("text", "aü€ש👍\u0301")).toEqual({
      ok: true,
      keysyms: [0x61, 0xfc, 0x20ac, 0xcf9, 0x101f44d, 0x1000301],
    });
  });

  it("types newline and CR LF as one Return each, and tab as Tab", () => {
    expect(textKeysyms("text", "a\nb\r\nc\td")).toEqual({
      ok: true,
      keysyms: [0x61, 0xff0d, 0x62, 0xff0d, 0x63, 0xff09, 0x64],
    });
  });

  it("refuses other control characters, naming their position", () => {
    expect(textKeysyms("text", "ab\u0007\u001b")).toEqual({
      ok: false,
      problems: ["text: character 3 (U+0007) cannot be typed", "text: character 4 (U+001B) cannot be typed"],
    });
  });
});
