// B4's floor on SQLite: the bare Express route plus the one statement a rename cannot do without
// (UPDATE … RETURNING through node:sqlite, WAL with synchronous=NORMAL as the gateway runs it),
// on the gateway's own database file. No auth lookup, no validation, no logging.

import { DatabaseSync } from "node:sqlite";
import express from "express";

// Like the services' main.ts: exit once loaded, which fills Node's compile cache (deploy/node-runtime.ts).
if (process.argv.includes("--version")) process.exit(0);

const db = new DatabaseSync(process.env.SQLITE_PATH ?? "");
db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;");
const rename = db.prepare("UPDATE proxies SET name = ?2 WHERE id = ?1 RETURNING id, name");

const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.use(express.json());
app.patch("/proxies/:id", (req, res) => {
  res.json(rename.get(req.params.id, String((req.body as { name?: unknown }).name)));
});

const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () =>
  server.close(() => {
    db.close();
    process.exit(0);
  }),
);
