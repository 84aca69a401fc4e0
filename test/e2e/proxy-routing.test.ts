import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type Kernel from "@onkernel/sdk";
import { type Browser, chromium as playwright } from "playwright-core";
import { Server as ProxyServer } from "proxy-chain";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { QUICKSTART_READY_TIMEOUT_MS, type Quickstart, startQuickstart } from "../support/quickstart.ts";

/**
 * A session created with a proxy sends its browser's traffic through it, through the quick start
 * as a user runs it (with PROXY_ALLOWED_NETWORKS=127.0.0.0/8, since every server here is on
 * loopback): loopback upstream proxies that demand Basic credentials record what reaches them, and
 * a loopback site records what reaches it.
 */

const PASSWORD = `pw-${Math.random().toString(36).slice(2)}-secret`;
const TEMPLATE_PASSWORD = `tpl-${Math.random().toString(36).slice(2)}-secret`;

interface Seen {
  username: string;
  password: string;
  url: string;
}

/** An upstream proxy that demands `password` and records every request it is asked to carry. */
class RecordingProxy {
  readonly seen: Seen[] = [];
  readonly #password: string;
  server: ProxyServer | undefined;

  constructor(password: string) {
    this.#password = password;
  }

  /** Listens on `port` (any free one when 0). */
  async start(port = 0): Promise<void> {
    this.server = new ProxyServer({
      host: "127.0.0.1",
      port,
      prepareRequestFunction: ({ username, password, request }) => {
        this.seen.push({ username, password, url: request.url ?? "" });
        return { requestAuthentication: password !== this.#password };
      },
    });
    await this.server.listen();
  }

  async stop(): Promise<void> {
    await this.server?.close(true);
  }

  get port(): number {
    return this.server?.port ?? 0;
  }
}

let quickstart: Quickstart | undefined;
let dataDir: string;
let kernel: Kernel;
let site: Server;
let sitePort: number;
/** Paths the site served, in order. */
const served: string[] = [];
const upstream = new RecordingProxy(PASSWORD);
const templated = new RecordingProxy(TEMPLATE_PASSWORD);
let browser: Browser | undefined;

const PAGE = `<!doctype html><html><body><p id="p">page</p><img src="/pixel.gif"><script src="/app.js"></script></body></html>`;

beforeAll(async () => {
  site = createServer((request, response) => {
    served.push(request.url ?? "");
    if (request.url?.endsWith(".js")) response.writeHead(200, { "content-type": "text/javascript" }).end("1;");
    else if (request.url?.endsWith(".gif")) response.writeHead(204).end();
    else response.writeHead(200, { "content-type": "text/html" }).end(PAGE);
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  sitePort = (site.address() as AddressInfo).port;
  await upstream.start();
  await templated.start();

  quickstart = await startQuickstart("proxy-routing", {
    QUICKSTART_BROWSERS: "1",
    LOG_LEVEL: "debug",
    PROXY_ALLOWED_NETWORKS: "127.0.0.0/8",
    PROXY_URL_TEMPLATE_RESIDENTIAL: `http://res-{session}-{country}:${TEMPLATE_PASSWORD}@127.0.0.1:${templated.port}`,
  });
  ({ kernel, dataDir } = quickstart);
  // The one browser is the session the quick start made; each test takes it in turn.
  await kernel.browsers.deleteByID((await kernel.browsers.retrieve("local")).session_id);
}, QUICKSTART_READY_TIMEOUT_MS + 10_000);

afterEach(async () => {
  await browser?.close().catch(() => undefined);
  browser = undefined;
  for await (const session of kernel.browsers.list()) await kernel.browsers.deleteByID(session.session_id);
});

afterAll(async () => {
  await quickstart?.stop();
  await upstream.stop();
  await templated.stop();
  await new Promise<void>((resolve) => site?.close(() => resolve()));
});

/** Creates a session (through `proxyId` when given) and opens its first page over CDP. */
async function sessionPage(proxyId?: string) {
  const session = await kernel.browsers.create(proxyId ? { proxy_id: proxyId } : {});
  browser = await playwright.connectOverCDP(session.cdp_ws_url);
  const page = browser.contexts()[0]?.pages()[0] ?? (await browser.newPage());
  return { session, page };
}

async function customProxy(fields: { bypass_hosts?: string[] } = {}) {
  return kernel.proxies.create({
    type: "custom",
    protocol: "http",
    config: { host: "127.0.0.1", port: upstream.port, username: "alice", password: PASSWORD },
    ...fields,
  });
}

const siteUrl = (host: string, path: string) => `http://${host}:${sitePort}${path}`;

/** The requests for the test's site (not the browser's own, such as its component updater's). */
function toSite(seen: Seen[]): Seen[] {
  return seen.filter((entry) => new URL(entry.url).port === String(sitePort));
}

describe("a session's browser traffic", { timeout: 60_000 }, () => {
  it("goes through its proxy, every request the page makes, with the proxy's credentials", async () => {
    const proxy = await customProxy();
    const { page } = await sessionPage(proxy.id);
    upstream.seen.length = 0;
    served.length = 0;
    await page.goto(siteUrl("127.0.0.1", "/routed"), { waitUntil: "load" });
    expect(await page.textContent("#p")).toBe("page");
    // Chromium asks for /favicon.ico on its own, at a time of its choosing.
    const pages = (paths: string[]) => paths.filter((path) => path !== "/favicon.ico").sort();
    expect(pages(served)).toEqual(["/app.js", "/pixel.gif", "/routed"]);
    expect(pages(toSite(upstream.seen).map((seen) => new URL(seen.url).pathname))).toEqual(pages(served));
    for (const seen of upstream.seen) expect(seen).toMatchObject({ username: "alice", password: PASSWORD });
  });

  it("goes straight to a bypass host, and through the proxy for any other", async () => {
    const proxy = await customProxy({ bypass_hosts: ["localhost"] });
    const { page } = await sessionPage(proxy.id);
    upstream.seen.length = 0;
    await page.goto(siteUrl("localhost", "/bypassed"), { waitUntil: "load" });
    expect(served).toContain("/bypassed");
    expect(toSite(upstream.seen)).toEqual([]);
    await page.goto(siteUrl("127.0.0.1", "/proxied"), { waitUntil: "load" });
    expect(toSite(upstream.seen).map((seen) => seen.url)).toContain(siteUrl("127.0.0.1", "/proxied"));
  });

  it("of a session without a proxy does not go through one", async () => {
    const { page } = await sessionPage();
    upstream.seen.length = 0;
    templated.seen.length = 0;
    await page.goto(siteUrl("127.0.0.1", "/direct"), { waitUntil: "load" });
    expect(served).toContain("/direct");
    // Not even Chromium's own background requests.
    expect(upstream.seen).toEqual([]);
    expect(templated.seen).toEqual([]);
  });

  it("fails with a proxy error once the proxy is gone, and is never fetched directly instead", async () => {
    const proxy = await customProxy();
    const { page } = await sessionPage(proxy.id);
    await page.goto(siteUrl("127.0.0.1", "/before"), { waitUntil: "load" });
    const port = upstream.port;
    await upstream.stop();
    try {
      served.length = 0;
      const answer = await page.goto(siteUrl("127.0.0.1", "/after"), { waitUntil: "load" }).then(
        (response) => `status ${response?.status()}`,
        (error: Error) => error.message,
      );
      // proxy-chain answers 5xx codes of its own (594: the upstream refused the connection).
      expect(answer).toMatch(/status 5\d\d|net::ERR_(PROXY|TUNNEL)/);
      expect(served).toEqual([]);
      // The check shows the session's proxy is down.
      const checked = await kernel.proxies.check(proxy.id as string);
      expect(checked.status).toBe("unavailable");
    } finally {
      // Back on the same port, for the tests after this one.
      await upstream.start(port);
    }
  });
});

describe("a managed proxy", { timeout: 60_000 }, () => {
  it("routes through its type's URL template, filled in with its config and the session's id", async () => {
    const proxy = await kernel.proxies.create({ type: "residential", config: { country: "DE" } });
    const { session, page } = await sessionPage(proxy.id);
    await page.goto(siteUrl("127.0.0.1", "/templated"), { waitUntil: "load" });
    expect(templated.seen.length).toBeGreaterThan(0);
    for (const seen of templated.seen) {
      expect(seen).toMatchObject({ username: `res-${session.session_id}-DE`, password: TEMPLATE_PASSWORD });
    }
  });

  it("of a type without a template is refused with 400 naming the setting, and takes no host", async () => {
    const proxy = await kernel.proxies.create({ type: "datacenter", config: { country: "US" } });
    const refusal = await kernel.browsers.create({ proxy_id: proxy.id }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 400 });
    expect((refusal as Error).message).toContain("PROXY_URL_TEMPLATE_DATACENTER");
    // The one host is still free.
    await kernel.browsers.create({});
  });
});

/**
 * A CA, and a certificate it signed for `secure.test`: what a TLS-intercepting proxy presents
 * for the sites it intercepts.
 */
function interceptionCertificates(dir: string): { ca: string; cert: string; key: string } {
  const file = (name: string) => join(dir, name);
  const ec = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"];
  execFileSync("openssl", ["genpkey", ...ec, "-out", file("ca.key")]);
  execFileSync("openssl", [
    ...["req", "-x509", "-key", file("ca.key"), "-subj", "/CN=Intercepting test CA", "-days", "2"],
    ...["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
    ...["-out", file("ca.crt")],
  ]);
  execFileSync("openssl", ["genpkey", ...ec, "-out", file("site.key")]);
  execFileSync("openssl", [
    "req",
    "-new",
    "-key",
    file("site.key"),
    "-subj",
    "/CN=secure.test",
    "-out",
    file("site.csr"),
  ]);
  writeFileSync(file("site.ext"), "subjectAltName=DNS:secure.test\nextendedKeyUsage=serverAuth\n");
  execFileSync("openssl", [
    ...["x509", "-req", "-in", file("site.csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key")],
    ...["-set_serial", "7", "-days", "2", "-extfile", file("site.ext"), "-out", file("site.crt")],
  ]);
  return {
    ca: readFileSync(file("ca.crt"), "utf8"),
    cert: readFileSync(file("site.crt"), "utf8"),
    key: readFileSync(file("site.key"), "utf8"),
  };
}

describe("a proxy that intercepts TLS", { timeout: 60_000 }, () => {
  let proxy: Server;
  let certificates: ReturnType<typeof interceptionCertificates>;
  const tunnels = new Set<Duplex>();

  beforeAll(async () => {
    certificates = interceptionCertificates(mkdtempSync(join(dataDir, "interception-")));
    // Answers every CONNECT itself and plays the site, with a certificate of its own CA.
    const site = createTlsServer({ key: certificates.key, cert: certificates.cert }, (_request, response) =>
      response.writeHead(200, { "content-type": "text/html" }).end(`<p id="p">intercepted</p>`),
    );
    proxy = createServer().on("connect", (_request, socket) => {
      tunnels.add(socket);
      socket.once("close", () => tunnels.delete(socket));
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      site.emit("connection", socket);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    // Tunnels left the HTTP server's hands at CONNECT: closeAllConnections does not see them.
    for (const socket of tunnels) socket.destroy();
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  });

  const interceptingProxy = (caBundle?: string) =>
    kernel.proxies.create({
      type: "custom",
      protocol: "http",
      config: {
        host: "127.0.0.1",
        port: (proxy.address() as AddressInfo).port,
        ...(caBundle && { ca_bundle: caBundle }),
      },
    });

  it("is trusted by the session's browser when its CA is the proxy's ca_bundle", async () => {
    const { page } = await sessionPage((await interceptingProxy(certificates.ca)).id);
    await page.goto("https://secure.test/", { waitUntil: "load" });
    expect(await page.textContent("#p")).toBe("intercepted");
  });

  it("is not trusted without it", async () => {
    const { page } = await sessionPage((await interceptingProxy()).id);
    const outcome = await page.goto("https://secure.test/").then(
      () => "loaded",
      (error: Error) => error.message,
    );
    expect(outcome).toContain("net::ERR_CERT_AUTHORITY_INVALID");
  });
});

describe("the proxy's password", () => {
  it("appears in no log line and no response", async () => {
    const proxy = await customProxy();
    const responses = JSON.stringify([
      await kernel.proxies.retrieve(proxy.id as string),
      await kernel.proxies.list(),
      await kernel.browsers.create({ proxy_id: proxy.id }),
      await kernel.browsers.list(),
    ]);
    expect(responses).not.toContain(PASSWORD);
    const logs = readdirSync(join(dataDir, "logs")).map((name) => readFileSync(join(dataDir, "logs", name), "utf8"));
    expect(logs.join("\n").length).toBeGreaterThan(0);
    for (const text of [...logs, quickstart?.output() ?? ""]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(TEMPLATE_PASSWORD);
    }
  });
});
