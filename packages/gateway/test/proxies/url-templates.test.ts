import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { expandTemplate, templateProblem } from "../../src/proxies/url-templates.ts";

describe("managed proxy URL templates", () => {
  it("fill in the proxy's config fields and the session id, percent-encoded", () => {
    const template = "http://user-{session}-country-{country}-city-{city}:pass%40word@{state}.proxy.example:8000";
    expect(expandTemplate(template, { country: "DE", city: "a b:c@d", state: "by" }, "s1")).toEqual({
      protocol: "http",
      host: "by.proxy.example",
      port: 8000,
      username: "user-s1-country-DE-city-a b:c@d",
      password: "pass@word",
    });
  });

  it("leave a placeholder empty where the proxy's config has no such field, and default the port", () => {
    expect(expandTemplate("https://u{zip}{asn}:p@proxy.example", {}, "s")).toEqual({
      protocol: "https",
      host: "proxy.example",
      port: 443,
      username: "u",
      password: "p",
    });
  });

  it.each([
    ["http://{region}.proxy.example:1", "unknown placeholder {region}"],
    ["socks5://proxy.example:1080", "must be an http:// or https:// URL"],
    ["proxy.example:8000", "must be an http:// or https:// URL"],
    ["http://proxy.example:8000/path", "must be the proxy's origin only"],
    ["not a url", "is not a URL"],
  ])("refuse %s", (template, problem) => {
    expect(templateProblem(template)).toContain(problem);
  });

  it("are read from PROXY_URL_TEMPLATE_<TYPE>, and a bad one is a configuration error that does not repeat it", () => {
    const config = loadConfig({ PROXY_URL_TEMPLATE_RESIDENTIAL: "http://u-{session}:secret@proxy.example:1" });
    expect(config.proxyUrlTemplates).toEqual({ residential: "http://u-{session}:secret@proxy.example:1" });
    expect(() => loadConfig({ PROXY_URL_TEMPLATE_MOBILE: "ftp://u:secret@proxy.example" })).toThrow(
      /^PROXY_URL_TEMPLATE_MOBILE must be an http:\/\/ or https:\/\/ URL$/,
    );
  });
});
