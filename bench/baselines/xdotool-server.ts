// The peers' design for B1/B2: an HTTP server that runs `xdotool key --delay 0 <keys>` per request
// and answers once xdotool has exited. Same runtime (Node), same JSON body as press_key.
import { execFile } from "node:child_process";
import { createServer } from "node:http";

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let keys: string[];
    try {
      keys = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { keys: string[] }).keys;
    } catch {
      res.writeHead(400).end();
      return;
    }
    execFile("xdotool", ["key", "--delay", "0", ...keys], (error) => {
      res.writeHead(error ? 500 : 200).end();
    });
  });
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
