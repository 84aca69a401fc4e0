// B4's floor on PostgreSQL: the bare Express route plus the one statement a rename cannot do
// without (UPDATE … RETURNING through a pg pool of the gateway's size). No auth lookup, no
// validation, no logging: what is left is Express plus one database round trip per request.
import express from "express";
import pg from "pg";

// Like the services' main.ts: exit once loaded, which fills Node's compile cache (deploy/node-runtime.ts).
if (process.argv.includes("--version")) process.exit(0);

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.use(express.json());
app.patch("/proxies/:id", async (req, res) => {
  const { rows } = await pool.query("UPDATE proxies SET name = $2 WHERE id = $1 RETURNING id, name", [
    req.params.id,
    (req.body as { name?: unknown }).name,
  ]);
  res.json(rows[0]);
});

const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () => server.close(() => void pool.end().then(() => process.exit(0))));
