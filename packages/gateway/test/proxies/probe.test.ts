import { ProxyAddressPolicy } from "@browser-infra/contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../../test/support/ports.ts";
import { type ProxyEndpoint, probeProxy } from "../../src/proxies/probe.ts";
import {
  ECHOED_IP,
  type Listening,
  type LoopbackProxy,
  startLoopbackProxy,
  startSilentServer,
  startTargetSite,
  TEST_TLS,
} from "./loopback-proxy.ts";

// The test proxies listen on loopback, which the default policy refuses.
const LOOPBACK_ALLOWED = new ProxyAddressPolicy([{ address: "127.0.0.0", prefix: 8, family: "ipv4" }]);
const OPTIONS = { timeoutMs: 5_000, targetEchoesIp: true, addresses: LOOPBACK_ALLOWED };
const CREDENTIALS = { username: "probe-user", password: "probe-secret" };

let site: Listening;
let tlsSite: Listening;
let plain: LoopbackProxy;
let guarded: LoopbackProxy;
let secure: LoopbackProxy;
let silent: Listening;

beforeAll(async () => {
  [site, tlsSite, plain, guarded, secure, silent] = await Promise.all([
    startTargetSite(),
    startTargetSite({ tls: true }),
    startLoopbackProxy(),
    startLoopbackProxy({ credentials: CREDENTIALS }),
    startLoopbackProxy({ tls: true }),
    startSilentServer(),
  ]);
});

afterAll(async () => {
  await Promise.all([site, tlsSite, plain, guarded, secure, silent].map((server) => server?.close()));
});

function endpoint(proxy: Listening, extra: Partial<ProxyEndpoint> = {}): ProxyEndpoint {
  return { host: "127.0.0.1", port: proxy.port, protocol: "http", ...extra };
}

describe("probeProxy", () => {
  it("reports an HTTP proxy that fetches the target as available", async () => {
    const outcome = await probeProxy(endpoint(plain), new URL(`${site.url}/page`), OPTIONS);
    expect(outcome).toMatchObject({ available: true, message: expect.stringContaining("HTTP 200") });
  });

  it("sends the request through the proxy in absolute form", async () => {
    const target = `${site.url}/page?via=absolute-form`;
    await probeProxy(endpoint(plain), new URL(target), OPTIONS);
    expect(plain.requests).toContainEqual(expect.objectContaining({ method: "GET", target }));
  });

  it("takes the address an IP-echo target answers with as the proxy's IP address", async () => {
    const outcome = await probeProxy(endpoint(plain), new URL(`${site.url}/ip`), OPTIONS);
    expect(outcome.ipAddress).toBe(ECHOED_IP);
  });

  it("ignores an address in the answer of a target not known to echo the caller's address", async () => {
    const outcome = await probeProxy(endpoint(plain), new URL(`${site.url}/ip`), { ...OPTIONS, targetEchoesIp: false });
    expect(outcome.ipAddress).toBe("127.0.0.1");
  });

  it("falls back to the address the proxy host resolved to when the target does not echo one", async () => {
    const outcome = await probeProxy(endpoint(plain, { host: "localhost" }), new URL(`${site.url}/page`), OPTIONS);
    expect(outcome).toMatchObject({ available: true, ipAddress: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) });
  });

  it("reports a closed port as unavailable, naming the connection failure", async () => {
    const outcome = await probeProxy(endpoint({ ...plain, port: await freePort() }), new URL(site.url), OPTIONS);
    expect(outcome).toEqual({ available: false, message: expect.stringMatching(/cannot connect .*ECONNREFUSED/) });
  });

  it("reports a host name that does not resolve as unavailable", async () => {
    const outcome = await probeProxy(endpoint(plain, { host: "no-such-host.invalid" }), new URL(site.url), OPTIONS);
    expect(outcome).toMatchObject({ available: false, message: expect.stringContaining("cannot resolve") });
  });

  it("reports a proxy that never answers as unavailable once the deadline passes", async () => {
    const started = Date.now();
    const outcome = await probeProxy(endpoint(silent), new URL(site.url), { ...OPTIONS, timeoutMs: 300 });
    expect(outcome).toEqual({ available: false, message: "no answer within 300 ms" });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("reports a proxy that wants credentials and gets none as unavailable with HTTP 407", async () => {
    const outcome = await probeProxy(endpoint(guarded), new URL(site.url), OPTIONS);
    expect(outcome).toMatchObject({ available: false, message: expect.stringContaining("407") });
  });

  it("authenticates to the proxy with Basic credentials", async () => {
    const outcome = await probeProxy(endpoint(guarded, CREDENTIALS), new URL(site.url), OPTIONS);
    expect(outcome.available).toBe(true);
  });

  it("reports wrong credentials as unavailable", async () => {
    const wrong = { username: CREDENTIALS.username, password: "not-the-password" };
    const outcome = await probeProxy(endpoint(guarded, wrong), new URL(site.url), OPTIONS);
    expect(outcome).toMatchObject({ available: false, message: expect.stringContaining("407") });
  });

  it("tunnels to an https target with CONNECT and verifies the target's certificate", async () => {
    const outcome = await probeProxy(endpoint(plain, { caBundle: TEST_TLS.ca }), new URL(`${tlsSite.url}/ip`), OPTIONS);
    expect(outcome).toMatchObject({ available: true, ipAddress: ECHOED_IP });
    expect(plain.requests).toContainEqual(
      expect.objectContaining({ method: "CONNECT", target: `127.0.0.1:${tlsSite.port}` }),
    );
  });

  it("authenticates the CONNECT request too", async () => {
    const outcome = await probeProxy(
      endpoint(guarded, { ...CREDENTIALS, caBundle: TEST_TLS.ca }),
      new URL(tlsSite.url),
      OPTIONS,
    );
    expect(outcome.available).toBe(true);
  });

  it("refuses an https target whose certificate nothing trusts", async () => {
    const outcome = await probeProxy(endpoint(plain), new URL(tlsSite.url), OPTIONS);
    expect(outcome).toMatchObject({ available: false, message: expect.stringContaining("TLS") });
  });

  it("speaks TLS to an https proxy that the CA bundle vouches for", async () => {
    const outcome = await probeProxy(
      endpoint(secure, { protocol: "https", caBundle: TEST_TLS.ca }),
      new URL(`${site.url}/ip`),
      OPTIONS,
    );
    expect(outcome).toMatchObject({ available: true, ipAddress: ECHOED_IP });
  });

  it("verifies an https proxy addressed by name against its certificate", async () => {
    const outcome = await probeProxy(
      endpoint(secure, { host: "localhost", protocol: "https", caBundle: TEST_TLS.ca }),
      new URL(site.url),
      OPTIONS,
    );
    expect(outcome.available).toBe(true);
  });

  it("reports an https proxy with an untrusted certificate as unavailable", async () => {
    const outcome = await probeProxy(endpoint(secure, { protocol: "https" }), new URL(site.url), OPTIONS);
    expect(outcome).toMatchObject({
      available: false,
      message: expect.stringContaining("TLS handshake with the proxy"),
    });
  });

  it("refuses a proxy on loopback under the default address policy, before sending it anything", async () => {
    const before = plain.requests.length;
    const outcome = await probeProxy(endpoint(plain), new URL(`${site.url}/page`), {
      ...OPTIONS,
      addresses: new ProxyAddressPolicy([]),
    });
    expect(outcome).toEqual({
      available: false,
      message: "the proxy's address is not allowed: loopback; see PROXY_ALLOWED_NETWORKS",
    });
    expect(plain.requests).toHaveLength(before);
  });

  it("reports a target that answers with an error status as unavailable, with that status", async () => {
    const outcome = await probeProxy(endpoint(plain), new URL(`${site.url}/status/503`), OPTIONS);
    expect(outcome).toEqual({ available: false, message: `${site.url} answered HTTP 503 through the proxy` });
  });

  it("never puts the password in its message", async () => {
    const outcomes = await Promise.all([
      probeProxy(endpoint(guarded, CREDENTIALS), new URL(site.url), OPTIONS),
      probeProxy(endpoint(guarded, { ...CREDENTIALS, password: "wrong-secret" }), new URL(site.url), OPTIONS),
    ]);
    for (const outcome of outcomes) expect(outcome.message).not.toMatch(/secret/);
  });
});
