import http from "node:http";
import net from "node:net";
import tls from "node:tls";
import type { ProxyAddressPolicy } from "@browser-infra/contract";

/** How to reach a custom proxy, secrets opened. */
export interface ProxyEndpoint {
  host: string;
  port: number;
  protocol: "http" | "https";
  username?: string;
  password?: string;
  /** Trusted besides the public roots, for the proxy's own TLS and for a TLS-intercepting proxy. */
  caBundle?: string;
}

export interface ProbeOptions {
  timeoutMs: number;
  /**
   * Whether a bare IP address in the target's answer is the proxy's exit address. Only for
   * the operator's IP-echo target: from a caller's url it could be anything the proxy
   * can reach, such as an internal metadata service, and must not end up in ip_address.
   */
  targetEchoesIp: boolean;
  /** Which addresses the proxy's host may resolve to for the check to connect. */
  addresses: ProxyAddressPolicy;
}

export interface ProbeOutcome {
  available: boolean;
  /** On success: the exit address the IP-echo target reported, else the address the proxy host resolved to. */
  ipAddress?: string;
  /** What happened, for the caller and the log; never contains a secret. */
  message: string;
}

const USER_AGENT = "browser-infra-proxy-check/1";
// Enough for an IP-echo answer; the rest of a large page is not needed to judge the proxy.
const MAX_BODY_BYTES = 4096;

/** A step of the probe failed in a way that says the proxy (or the path through it) is not usable. */
class ProbeFailure extends Error {}

interface Answer {
  status: number;
  body: string;
}

function ignore(): void {}

async function step<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ProbeFailure) throw error;
    throw new ProbeFailure(`${what}: ${(error as Error).message}`);
  }
}

function track<S extends net.Socket>(sockets: net.Socket[], socket: S): S {
  sockets.push(socket);
  // A late error on a socket nobody reads any more must not crash the process.
  socket.on("error", ignore);
  return socket;
}

function connectTcp(address: string, port: number, sockets: net.Socket[]): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = track(sockets, net.connect({ host: address, port }));
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

function startTls(
  socket: net.Socket,
  host: string,
  caBundle: string | undefined,
  sockets: net.Socket[],
): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = track(
      sockets,
      tls.connect({
        socket,
        // host is what the certificate is verified against; SNI carries names only, never addresses.
        host,
        servername: net.isIP(host) ? undefined : host,
        ca: caBundle ? [...tls.rootCertificates, caBundle] : undefined,
      }),
    );
    secure.once("secureConnect", () => resolve(secure));
    secure.once("error", reject);
  });
}

function send(socket: net.Socket, options: http.RequestOptions): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ ...options, createConnection: () => socket });
    request.once("error", reject);
    request.once("response", (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") });
      response.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_BODY_BYTES) {
          done();
          response.destroy();
        }
      });
      response.once("end", done);
      response.once("error", reject);
    });
    request.end();
  });
}

function proxyHeaders(proxy: ProxyEndpoint): Record<string, string> {
  if (proxy.username === undefined && proxy.password === undefined) return {};
  const credentials = Buffer.from(`${proxy.username ?? ""}:${proxy.password ?? ""}`).toString("base64");
  return { "proxy-authorization": `Basic ${credentials}` };
}

function openTunnel(socket: net.Socket, authority: string, proxy: ProxyEndpoint): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      createConnection: () => socket,
      method: "CONNECT",
      path: authority,
      headers: { host: authority, "user-agent": USER_AGENT, ...proxyHeaders(proxy) },
    });
    request.once("error", reject);
    // Node reports every answer to CONNECT here, whatever its status.
    request.once("connect", (response, tunnel) => {
      if (response.statusCode === 200) resolve(tunnel);
      else reject(new ProbeFailure(refusal(response.statusCode ?? 0, `a tunnel to ${authority}`)));
    });
    request.end();
  });
}

function refusal(status: number, what: string): string {
  if (status === 407) return `the proxy refused its credentials for ${what} (HTTP 407)`;
  return `the proxy refused ${what} (HTTP ${status})`;
}

/** Asks the proxy for `target` the way a browser would: absolute-form GET for http, CONNECT then TLS for https. */
async function fetchThrough(
  socket: net.Socket,
  proxy: ProxyEndpoint,
  target: URL,
  sockets: net.Socket[],
): Promise<Answer> {
  const headers = { host: target.host, "user-agent": USER_AGENT, accept: "*/*", connection: "close" };
  if (target.protocol === "http:") {
    return step(`request to ${target.origin} through the proxy failed`, () =>
      send(socket, { method: "GET", path: target.href, headers: { ...headers, ...proxyHeaders(proxy) } }),
    );
  }
  const authority = `${target.hostname}:${target.port || 443}`;
  const tunnel = await step(`CONNECT ${authority} through the proxy failed`, () =>
    openTunnel(socket, authority, proxy),
  );
  const hostname = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const secure = await step(`TLS with ${target.origin} through the proxy failed`, () =>
    startTls(tunnel, hostname, proxy.caBundle, sockets),
  );
  return step(`request to ${target.origin} through the proxy failed`, () =>
    send(secure, { method: "GET", path: `${target.pathname}${target.search}`, headers }),
  );
}

async function attempt(
  proxy: ProxyEndpoint,
  target: URL,
  options: ProbeOptions,
  sockets: net.Socket[],
): Promise<ProbeOutcome> {
  const decision = await step(`cannot resolve ${proxy.host}`, () => options.addresses.decide(proxy.host));
  if (!decision.allowed) throw new ProbeFailure(decision.message);
  // The address decided on, not the name: a second lookup could answer differently.
  const { address } = decision;
  let socket = await step(`cannot connect to ${proxy.host}:${proxy.port}`, () =>
    connectTcp(address, proxy.port, sockets),
  );
  if (proxy.protocol === "https") {
    socket = await step(`TLS handshake with the proxy at ${proxy.host}:${proxy.port} failed`, () =>
      startTls(socket, proxy.host, proxy.caBundle, sockets),
    );
  }
  const answer = await fetchThrough(socket, proxy, target, sockets);
  if (answer.status === 407) throw new ProbeFailure(refusal(407, target.origin));
  if (answer.status < 200 || answer.status >= 400) {
    throw new ProbeFailure(`${target.origin} answered HTTP ${answer.status} through the proxy`);
  }
  const echoed = answer.body.trim();
  return {
    available: true,
    ipAddress: options.targetEchoesIp && net.isIP(echoed) ? echoed : address,
    message: `reached ${target.origin} through the proxy (HTTP ${answer.status})`,
  };
}

/**
 * A real health check: resolve the proxy's host and connect only if the address policy allows
 * what it resolved to (the TLS certificate is still checked against the host name), speak TLS to it
 * when its protocol is https, then fetch `target` through it.
 */
export async function probeProxy(proxy: ProxyEndpoint, target: URL, options: ProbeOptions): Promise<ProbeOutcome> {
  const sockets: net.Socket[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeFailure(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
  });
  try {
    return await Promise.race([attempt(proxy, target, options, sockets), deadline]);
  } catch (error) {
    if (error instanceof ProbeFailure) return { available: false, message: error.message };
    throw error;
  } finally {
    clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
  }
}
