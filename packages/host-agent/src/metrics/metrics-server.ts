import { createServer, type Server } from "node:http";
import { registry } from "./registry.ts";
// Registered from the start, so the series reads 0 before the keyboard ever reconnects.
import "./x-reconnects.ts";

export interface MetricsServer {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** "[::1]:9464" → ["::1", 9464] */
function splitHostPort(listen: string): [string, number] {
  const colon = listen.lastIndexOf(":");
  return [listen.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), Number(listen.slice(colon + 1))];
}

/**
 * GET /metrics in the Prometheus text format, on a port apart from gRPC so
 * a scraper needs neither gRPC nor the client certificate mTLS demands.
 */
export async function startMetricsServer(listen: string): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("only GET /metrics is served here\n");
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { "content-type": registry.contentType }).end(req.method === "HEAD" ? "" : body),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("could not collect metrics\n"),
    );
  });
  const [host, port] = splitHostPort(listen);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
