import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A CA and a certificate it signed for localhost and 127.0.0.1, for TLS proxies and targets in tests. */
export const TEST_TLS = {
  ca: readFileSync(new URL("test-ca.pem", FIXTURES), "utf8"),
  cert: readFileSync(new URL("localhost-cert.pem", FIXTURES), "utf8"),
  key: readFileSync(new URL("localhost-key.pem", FIXTURES), "utf8"),
};

export interface Listening {
  port: number;
  url: string;
  close(): Promise<void>;
}

async function listen(server: net.Server, scheme: "http" | "https", port = 0): Promise<Listening> {
  // Tunnels leave the HTTP server's bookkeeping, so every raw connection is tracked for close().
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as net.AddressInfo).port;
  return {
    port: bound,
    url: `${scheme}://127.0.0.1:${bound}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

export interface ProxyLog {
  method: string;
  target: string;
  authorization: string | undefined;
}

export interface LoopbackProxy extends Listening {
  /** Every request the proxy received, in order. */
  requests: ProxyLog[];
}

export interface LoopbackProxyOptions {
  /** When set, requests without these Basic credentials get 407. */
  credentials?: { username: string; password: string };
  /** Speak TLS to clients (an "https" proxy) with the test certificate. */
  tls?: boolean;
  /** A fixed port; any free one otherwise. */
  port?: number;
}

/** A real forwarding HTTP proxy on loopback: absolute-form requests for http targets, CONNECT tunnels for https. */
export async function startLoopbackProxy(options: LoopbackProxyOptions = {}): Promise<LoopbackProxy> {
  const requests: ProxyLog[] = [];
  const expected =
    options.credentials &&
    `Basic ${Buffer.from(`${options.credentials.username}:${options.credentials.password}`).toString("base64")}`;
  const authorized = (req: http.IncomingMessage) => {
    const authorization = req.headers["proxy-authorization"];
    requests.push({ method: req.method ?? "", target: req.url ?? "", authorization });
    return expected === undefined || authorization === expected;
  };

  const server = options.tls ? https.createServer({ cert: TEST_TLS.cert, key: TEST_TLS.key }) : http.createServer();
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!authorized(req)) {
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="test"' }).end();
      return;
    }
    const upstream = http.request(req.url ?? "", { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on("error", () => {});
    if (!authorized(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? "").split(":");
    const upstream = net.connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
  });
  return { ...(await listen(server, options.tls ? "https" : "http", options.port)), requests };
}

/**
 * A site to check proxies against: /ip answers with a fixed address, as IP-echo
 * services answer with the caller's; any other path answers with a page, or
 * with the status code the path names (/status/404).
 */
export const ECHOED_IP = "198.51.100.23";

export async function startTargetSite(options: { tls?: boolean } = {}): Promise<Listening> {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const status = /^\/status\/(\d{3})$/.exec(req.url ?? "");
    if (status) res.writeHead(Number(status[1])).end();
    else if (req.url === "/ip") res.end(`${ECHOED_IP}\n`);
    else res.end("<!doctype html><title>target</title>");
  };
  const server = options.tls
    ? https.createServer({ cert: TEST_TLS.cert, key: TEST_TLS.key }, handler)
    : http.createServer(handler);
  return listen(server, options.tls ? "https" : "http");
}

/** A loopback server that accepts connections and never says a word. */
export function startSilentServer(): Promise<Listening> {
  return listen(
    net.createServer((socket) => socket.on("error", () => {})),
    "http",
  );
}
