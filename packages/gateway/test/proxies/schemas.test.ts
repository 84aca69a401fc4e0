import { describe, expect, it } from "vitest";
import { CreateProxyRequest, ProxyName } from "../../src/proxies/schemas.ts";

function country(code: string) {
  return CreateProxyRequest.safeParse({ type: "datacenter", config: { country: code } });
}

describe("ProxyName", () => {
  it("trims with String.prototype.trim, including non-ASCII whitespace", () => {
    expect(ProxyName.parse("\u00a0\u2003\ufeff\t name \n\u3000")).toBe("name");
  });

  it("counts characters, not UTF-16 code units: 255 emoji are a valid name", () => {
    expect(ProxyName.safeParse("😀".repeat(255)).success).toBe(true);
    expect(ProxyName.safeParse("😀".repeat(256)).success).toBe(false);
  });
});

describe("country codes", () => {
  const A_TO_Z = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const all = [...A_TO_Z].flatMap((first) => [...A_TO_Z].map((second) => first + second));

  it("accepts exactly the 249 officially assigned ISO 3166-1 alpha-2 codes", () => {
    expect(all.filter((code) => country(code).success)).toHaveLength(249);
  });

  it.each(["UK", "EU", "XK", "ZZ", "AN"])("refuses the reserved or retired code %s", (code) => {
    expect(country(code).success).toBe(false);
  });

  it("takes a lower-case code as the upper-case one", () => {
    expect(country("de").data?.config).toEqual({ country: "DE" });
  });
});
