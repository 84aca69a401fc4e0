// First hop of the "floor" two-hop pair: a bare node:http server that forwards each request over
// one grpc-js channel to floor-agent.ts and answers when it answers. No Express, auth, store,
// validation, logging or metrics: the least any HTTP → gRPC → agent design can cost on this stack.
import { createServer } from "node:http";
import { Client, credentials, Metadata } from "@grpc/grpc-js";
import { FLOOR_SERVICE } from "./floor-service.ts";

// Like the services' main.ts: exit once loaded, which fills Node's compile cache (deploy/node-runtime.ts).
if (process.argv.includes("--version")) process.exit(0);

const channel = new Client(process.env.FLOOR_AGENT ?? "", credentials.createInsecure());
const DEADLINE_MS = 5_000;

function call(method: "fileInfo" | "pressKey", request: Buffer): Promise<Buffer> {
  const definition = FLOOR_SERVICE[method];
  if (!definition) throw new Error(`no ${method}`);
  return new Promise((resolve, reject) => {
    channel.makeUnaryRequest(
      definition.path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      request,
      new Metadata(),
      { deadline: Date.now() + DEADLINE_MS },
      (error, response) => (error ? reject(error) : resolve(response as Buffer)),
    );
  });
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  const fail = () => res.writeHead(502).end();
  if (req.method === "GET" && url.pathname === "/fs/file_info") {
    call("fileInfo", Buffer.from(url.searchParams.get("path") ?? "/")).then(
      (body) => res.writeHead(200, { "content-type": "application/json" }).end(body),
      fail,
    );
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const keys = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { keys: string[] }).keys;
    call("pressKey", Buffer.from(JSON.stringify(keys))).then(() => res.writeHead(200).end(), fail);
  });
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () => {
  channel.close();
  server.close(() => process.exit(0));
});
