// First hop of B9's floor: a bare ws server on node:http that bridges each WebSocket to a raw-buffer
// grpc-js bidirectional stream to floor-cdp-agent.ts (the path after /cdp/ is the browser's DevTools
// URL, percent-encoded). No token, store, back-pressure, pings, logging or metrics: the least a
// WebSocket → gRPC stream → agent → Chromium design can cost on this stack.
import { createServer } from "node:http";
import { Client, type ClientDuplexStream, credentials, Metadata } from "@grpc/grpc-js";
import { WebSocketServer } from "ws";
import { FLOOR_CDP_SERVICE, FLOOR_MAX_MESSAGE_BYTES } from "./floor-cdp-service.ts";

// Like the services' main.ts: exit once loaded, which fills Node's compile cache (deploy/node-runtime.ts).
if (process.argv.includes("--version")) process.exit(0);

const channel = new Client(process.env.FLOOR_AGENT ?? "", credentials.createInsecure(), {
  "grpc.max_receive_message_length": FLOOR_MAX_MESSAGE_BYTES,
});
const cdp = FLOOR_CDP_SERVICE.cdp;
if (!cdp) throw new Error("no cdp method");

const server = createServer((_req, res) => res.writeHead(404).end());
const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: FLOOR_MAX_MESSAGE_BYTES });
server.on("upgrade", (req, socket, head) => {
  const browserUrl = decodeURIComponent((req.url ?? "").replace(/^\/cdp\//, ""));
  const stream: ClientDuplexStream<Buffer, Buffer> = channel.makeBidiStreamRequest(
    cdp.path,
    (b: Buffer) => b,
    (b: Buffer) => b,
    new Metadata(),
    {},
  );
  stream.on("error", () => socket.destroy());
  stream.once("data", () => {
    sockets.handleUpgrade(req, socket, head, (ws) => {
      stream.on("data", (message: Buffer) => ws.send(message, { binary: false }));
      stream.on("end", () => ws.close());
      ws.on("message", (data: Buffer) => stream.write(data));
      ws.on("close", () => stream.cancel());
    });
  });
  stream.write(Buffer.from(browserUrl));
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () => {
  channel.close();
  server.close(() => process.exit(0));
  for (const ws of sockets.clients) ws.terminate();
});
