import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";

const base = { AGENT_CHROMIUM_PATH: "none", AGENT_XVFB: "1024x768x24" };

describe("AGENT_KEYBOARD_LAYOUT", () => {
  it("is unset by default: the server's own layout", () => {
    expect(loadConfig(base).keyboardLayout).toBeUndefined();
  });

  it("takes a layout XKB has, with an optional variant", () => {
    expect(loadConfig({ ...base, AGENT_KEYBOARD_LAYOUT: "de" }).keyboardLayout).toEqual({
      layout: "de",
      variant: undefined,
    });
    expect(loadConfig({ ...base, AGENT_KEYBOARD_LAYOUT: "de(nodeadkeys)" }).keyboardLayout).toEqual({
      layout: "de",
      variant: "nodeadkeys",
    });
  });

  it.each([
    ["a name with a path in it", "../de", /must be an XKB layout such as de/],
    ["a name with a space", "de fr", /must be an XKB layout such as de/],
    ["a layout XKB does not have", "klingon", /no XKB layout "klingon" in \/usr\/share\/X11\/xkb\/symbols/],
    ["a variant the layout does not have", "de(nosuch)", /the XKB layout "de" has no variant "nosuch"/],
  ])("refuses %s", (_case, layout, message) => {
    expect(() => loadConfig({ ...base, AGENT_KEYBOARD_LAYOUT: layout })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, AGENT_KEYBOARD_LAYOUT: layout })).toThrow(message);
  });

  it("needs AGENT_XVFB: it applies to the agent's own display", () => {
    expect(() => loadConfig({ AGENT_CHROMIUM_PATH: "none", AGENT_KEYBOARD_LAYOUT: "de" })).toThrow(
      /set AGENT_XVFB as well/,
    );
  });
});
