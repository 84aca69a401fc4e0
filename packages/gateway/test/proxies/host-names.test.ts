import { describe, expect, it } from "vitest";
import { bypassHostProblem, proxyHostProblem } from "../../src/proxies/host-names.ts";

describe("proxyHostProblem", () => {
  it.each(["proxy.example.com", "localhost", "10.0.0.1", "2001:db8::1", "a-b.c-d.io", `${"a".repeat(63)}.com`])(
    "accepts %s",
    (host) => {
      expect(proxyHostProblem(host)).toBeUndefined();
    },
  );

  it.each([
    ["http://proxy.example.com", "without a scheme"],
    ["proxy.example.com:8080", "must not include a port"],
    ["10.0.0.1:3128", "must not include a port"],
    ["[2001:db8::1]:3128", "must not include a port"],
    ["[2001:db8::1]", "without brackets"],
    ["proxy example.com", "must be a host name or IP address"],
    ["-proxy.example.com", "must be a host name or IP address"],
    ["999.1.1.1", "must be a host name or IP address"],
    [`${"a".repeat(64)}.com`, "must be a host name or IP address"],
    [`${"a.".repeat(127)}com`, "must be at most 253 characters"],
    ["", "must be a host name or IP address"],
  ])("refuses %s", (host, problem) => {
    expect(proxyHostProblem(host)).toContain(problem);
  });
});

describe("bypassHostProblem", () => {
  it.each([
    "example.com",
    "*.example.com",
    "localhost",
    "intranet",
    "sub.domain.example.co.uk",
    `${"a.".repeat(125)}com`,
  ])("accepts %s", (entry) => {
    expect(bypassHostProblem(entry)).toBeUndefined();
  });

  it.each([
    ["https://example.com", "without a scheme"],
    ["example.com:443", "without a port"],
    ["192.168.1.1", "not an IP address"],
    ["::1", "not an IP address"],
    ["[::1]", "not an IP address"],
    ["*example.com", "wildcard such as *.example.com"],
    ["*.*.example.com", "wildcard such as *.example.com"],
    ["example.*", "wildcard such as *.example.com"],
    ["exa mple.com", "host name such as example.com"],
    [`${"a.".repeat(126)}com`, "at most 253 characters"],
  ])("refuses %s", (entry, problem) => {
    expect(bypassHostProblem(entry)).toContain(problem);
  });
});
