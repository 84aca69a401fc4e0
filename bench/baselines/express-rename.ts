// B4's baseline: the same framework as the gateway with nothing behind the route, so the ratio
// isolates what auth, validation, the store and logging cost on top of Express itself.
import express from "express";

const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.use(express.json());
app.patch("/proxies/:id", (req, res) => {
  res.json({ id: req.params.id, name: (req.body as { name?: unknown }).name });
});

const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
