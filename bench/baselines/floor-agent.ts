// Second hop of the "floor" two-hop pair: a bare grpc-js server with raw-buffer methods (no
// protobuf, no interceptors, no logging, no metrics) that does the same work as the host agent
// with the agent's own code (lstat; the XTEST keyboard). What is left is the cost of the design.
import { lstat } from "node:fs/promises";
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from "@grpc/grpc-js";
import pino from "pino";
import { openKeyboard } from "../../packages/host-agent/src/keyboard/index.ts";
import { FLOOR_SERVICE } from "./floor-service.ts";

// Like the services' main.ts: exit once loaded, which fills Node's compile cache (deploy/node-runtime.ts).
if (process.argv.includes("--version")) process.exit(0);

const keyboard = process.env.DISPLAY
  ? openKeyboard({ display: process.env.DISPLAY, logger: pino({ level: "silent" }) })
  : undefined;

const server = new Server();
server.addService(FLOOR_SERVICE, {
  fileInfo: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
    lstat(call.request.toString("utf8"), { bigint: true }).then(
      (stats) =>
        callback(
          null,
          Buffer.from(
            JSON.stringify({ is_dir: stats.isDirectory(), size: String(stats.size), mtime: String(stats.mtimeNs) }),
          ),
        ),
      (error: Error) => callback({ code: 5, details: error.message }),
    );
  },
  pressKey: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
    if (!keyboard) {
      callback({ code: 9, details: "no DISPLAY" });
      return;
    }
    const keys = JSON.parse(call.request.toString("utf8")) as string[];
    keyboard.press({ keys, durationMs: 0, holdKeys: [] }).then(
      () => callback(null, Buffer.alloc(0)),
      (error: Error) => callback({ code: 13, details: error.message }),
    );
  },
});
server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => {
  if (error) throw error;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
