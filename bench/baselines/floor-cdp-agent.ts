// Second hop of B9's floor: a bare grpc-js server whose raw-buffer bidirectional stream opens a
// WebSocket (ws, as the agent's) to the DevTools URL in its first message and carries messages both
// ways. No protobuf, slot, fence, back-pressure, interceptors, logging or metrics.
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import WebSocket from "ws";
import { FLOOR_CDP_SERVICE, FLOOR_MAX_MESSAGE_BYTES } from "./floor-cdp-service.ts";

// Like the services' main.ts: exit once loaded, which fills Node's compile cache (deploy/node-runtime.ts).
if (process.argv.includes("--version")) process.exit(0);

const server = new Server({ "grpc.max_receive_message_length": FLOOR_MAX_MESSAGE_BYTES });
server.addService(FLOOR_CDP_SERVICE, {
  cdp: (stream: ServerDuplexStream<Buffer, Buffer>) => {
    let socket: WebSocket | undefined;
    stream.on("data", (message: Buffer) => {
      if (socket) {
        socket.send(message, { binary: false });
        return;
      }
      const opened = new WebSocket(message.toString("utf8"), {
        perMessageDeflate: false,
        maxPayload: FLOOR_MAX_MESSAGE_BYTES,
      });
      socket = opened;
      opened.once("open", () => stream.write(Buffer.alloc(0)));
      opened.on("message", (data: Buffer) => stream.write(data));
      opened.on("close", () => stream.end());
      opened.on("error", () => stream.destroy());
    });
    stream.on("end", () => socket?.terminate());
    stream.on("cancelled", () => socket?.terminate());
    stream.on("error", () => socket?.terminate());
  },
});
server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
