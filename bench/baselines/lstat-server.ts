// B3's baseline: the one hop a file_info needs at minimum, an HTTP server that lstats the path
// and answers the same record shape. No auth, no store, no second process.
import { lstat } from "node:fs/promises";
import { createServer } from "node:http";
import { basename } from "node:path";

const server = createServer(async (req, res) => {
  const path = new URL(req.url ?? "/", "http://localhost").searchParams.get("path") ?? "/";
  try {
    const stats = await lstat(path, { bigint: true });
    const body = JSON.stringify({
      is_dir: stats.isDirectory(),
      mod_time: new Date(Number(stats.mtimeMs)).toISOString(),
      mode: stats.mode.toString(8),
      name: basename(path) || "/",
      path,
      size_bytes: Number(stats.size),
    });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  } catch {
    res.writeHead(404).end();
  }
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
