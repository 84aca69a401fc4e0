import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";

describe("HOST_AGENTS_DNS", () => {
  it("is unset by default", () => {
    expect(loadConfig({}).hostAgentsDns).toBeUndefined();
    expect(loadConfig({ HOST_AGENTS_DNS: "" }).hostAgentsDns).toBeUndefined();
  });

  it.each([
    ["browser-host:50051", { name: "browser-host", port: 50051 }],
    ["agents.browser-infra.svc.cluster.local.:443", { name: "agents.browser-infra.svc.cluster.local.", port: 443 }],
    ["localhost:1", { name: "localhost", port: 1 }],
  ])("reads %s", (raw, expected) => {
    expect(loadConfig({ HOST_AGENTS_DNS: raw }).hostAgentsDns).toEqual(expected);
  });

  it.each([
    "browser-host",
    "browser-host:",
    ":50051",
    "browser-host:0",
    "browser-host:65536",
    "browser-host:50051,other:50051",
    "http://browser-host:50051",
    "[::1]:50051",
    "bad_name!:50051",
    "-leading-hyphen:50051",
  ])("refuses %s in one line", (raw) => {
    const load = () => loadConfig({ HOST_AGENTS_DNS: raw });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`HOST_AGENTS_DNS must be name:port (a DNS name and a port from 1 to 65535), got "${raw}"`);
  });
});

describe("PUBLIC_URL", () => {
  it("is unset by default (the CDP URLs are then on HOST and the port bound)", () => {
    expect(loadConfig({}).publicUrl).toBeUndefined();
  });

  it.each([
    ["https://browsers.example.com", "https://browsers.example.com"],
    ["https://browsers.example.com/", "https://browsers.example.com"],
    ["http://10.0.0.5:8080", "http://10.0.0.5:8080"],
  ])("reads %s as the origin %s", (raw, origin) => {
    expect(loadConfig({ PUBLIC_URL: raw }).publicUrl).toBe(origin);
  });

  it.each(["browsers.example.com", "ws://gateway:8080", "https://example.com/api", "https://example.com/?a=1"])(
    "refuses %s: an http(s) origin only",
    (raw) => {
      expect(() => loadConfig({ PUBLIC_URL: raw })).toThrow(/PUBLIC_URL must be an http:\/\/ or https:\/\/ origin/);
    },
  );
});

describe("PROXY_ALLOWED_NETWORKS", () => {
  it("is empty by default", () => {
    expect(loadConfig({}).proxyAllowedNetworks).toEqual([]);
    expect(loadConfig({ PROXY_ALLOWED_NETWORKS: "" }).proxyAllowedNetworks).toEqual([]);
  });

  it("reads a comma-separated list of IPv4 and IPv6 networks, spaces allowed", () => {
    expect(loadConfig({ PROXY_ALLOWED_NETWORKS: "127.0.0.0/8, ::1/128,10.0.0.5" }).proxyAllowedNetworks).toEqual([
      { address: "127.0.0.0", prefix: 8, family: "ipv4" },
      { address: "::1", prefix: 128, family: "ipv6" },
      { address: "10.0.0.5", prefix: 32, family: "ipv4" },
    ]);
  });

  it.each(["127.0.0.0/33", "localhost", "127.0.0.0/8 10.0.0.0/8", "fd00::/200"])(
    "refuses the bad entry in %j, naming it",
    (bad) => {
      const load = () => loadConfig({ PROXY_ALLOWED_NETWORKS: `::1/128,${bad}` });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(`PROXY_ALLOWED_NETWORKS: "${bad}" is not an IPv4 or IPv6 network`);
    },
  );
});
