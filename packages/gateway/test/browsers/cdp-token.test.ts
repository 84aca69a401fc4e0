import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CdpUrls, wsOrigin } from "../../src/browsers/cdp/cdp-url.ts";
import { closeText } from "../../src/browsers/cdp/close-reasons.ts";
import { CdpTokens } from "../../src/browsers/cdp/token.ts";
import type { BrowserSessionRecord } from "../../src/store/browser-sessions.ts";

const key = randomBytes(32);
const NOW = Date.parse("2026-11-22T12:00:00Z");

describe("CDP tokens", () => {
  it("grant the session and organization they name until they expire", () => {
    const tokens = new CdpTokens(key, 3_600);
    const token = tokens.issue("s1", "org-a", NOW);
    expect(token).toMatch(/^[\w-]+\.[\w-]{43}$/);
    expect(tokens.check(token, NOW)).toEqual({
      grant: { sessionId: "s1", organizationId: "org-a", expiresAt: NOW / 1000 + 3_600 },
    });
    expect(tokens.check(token, NOW + 3_599_000)).toHaveProperty("grant");
    expect(tokens.check(token, NOW + 3_600_000)).toEqual({ refused: "expired" });
  });

  it("are accepted by every holder of the same key: another replica", () => {
    const token = new CdpTokens(key, 60).issue("s1", "org-a", NOW);
    expect(new CdpTokens(Buffer.from(key), 60).check(token, NOW)).toHaveProperty("grant.sessionId", "s1");
    expect(new CdpTokens(randomBytes(32), 60).check(token, NOW)).toEqual({ refused: "malformed" });
  });

  it("refuse a changed payload, a changed signature, and anything that is not a token (an API key)", () => {
    const tokens = new CdpTokens(key, 60);
    const token = tokens.issue("s1", "org-a", NOW);
    const [payload = "", signature = ""] = token.split(".");
    const other = tokens.issue("s2", "org-a", NOW).split(".")[0];
    expect(tokens.check(`${other}.${signature}`, NOW)).toEqual({ refused: "malformed" });
    const flipped = `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`;
    expect(tokens.check(`${payload}.${flipped}`, NOW)).toEqual({ refused: "malformed" });
    for (const bad of ["", ".", "bik_0123456789abcdef", `${payload}.`, `${token}.x`, "a".repeat(5_000)]) {
      expect(tokens.check(bad, NOW)).toEqual({ refused: "malformed" });
    }
  });
});

function session(overrides: Partial<BrowserSessionRecord>): BrowserSessionRecord {
  return {
    id: "k7q2",
    organizationId: "org-a",
    deletedAt: null,
    cdpWsUrl: "ws://127.0.0.1:9222/devtools/browser/x",
    ...overrides,
  } as BrowserSessionRecord;
}

describe("session CDP URLs", () => {
  const urls = new CdpUrls(new CdpTokens(key, 60), () => "wss://browsers.example.com");

  it("are on the gateway's public origin, at the session's path, with a token for it", () => {
    const url = new URL(urls.of(session({})));
    expect(`${url.origin}${url.pathname}`).toBe("wss://browsers.example.com/browsers/k7q2/cdp");
    expect(new CdpTokens(key, 60).check(url.searchParams.get("token") as string)).toHaveProperty(
      "grant.sessionId",
      "k7q2",
    );
  });

  it("are empty for an ended session and for one whose host runs no browser", () => {
    expect(urls.of(session({ deletedAt: "2026-11-22T12:00:00.000Z" }))).toBe("");
    expect(urls.of(session({ cdpWsUrl: null }))).toBe("");
    expect(urls.of(session({ cdpWsUrl: "" }))).toBe("");
  });

  it("use ws for http and wss for https, and loopback for an unspecified listening address", () => {
    expect(wsOrigin("http://gateway:8080")).toBe("ws://gateway:8080");
    expect(wsOrigin("https://browsers.example.com")).toBe("wss://browsers.example.com");
    expect(wsOrigin("http://0.0.0.0:8080")).toBe("ws://127.0.0.1:8080");
    expect(wsOrigin("http://[::]:8080")).toBe("ws://127.0.0.1:8080");
    expect(wsOrigin("http://[::1]:8080")).toBe("ws://[::1]:8080");
  });
});

describe("CDP close reasons", () => {
  it("fit WebSocket's 123 bytes", () => {
    expect(closeText("session_ended")).toBe("browser session ended");
    expect(closeText("session_ended", "browser session k7q2 ended: deleted")).toBe(
      "browser session k7q2 ended: deleted",
    );
    const long = closeText("session_ended", "é".repeat(100));
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(123);
    expect(long).toMatch(/^é+\.\.\.$/);
  });
});
