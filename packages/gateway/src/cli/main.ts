#!/usr/bin/env node
import { parseArgs } from "node:util";
import { createApiKey } from "../auth/api-keys.ts";
import { AGENT_ADDRESS, ConfigError, loadConfig } from "../config.ts";
import { prepareDataDir } from "../data-dir.ts";
import { openStore, type Store, sqlitePathIn } from "../store/store.ts";

const USAGE = `usage: npm run admin -- <command>

  keys create --org <organization> [--name <label>]   create an API key; it is printed once
  keys list [--org <organization>]                   list keys (never the keys themselves)
  keys revoke <key id>                               revoke a key; every replica refuses it from its next request
  hosts add <host:port|unix:/path>                   register a host agent; gateways check it within HOST_CHECK_INTERVAL_MS
  hosts list                                         list host agents: health, Describe data, the session holding each
  hosts remove <host:port>                           forget an idle host agent (one holding a session is refused)

The store is the gateway's: DATABASE_URL, or SQLite under DATA_DIR (default ./data).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

async function run(store: Store, argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { org: { type: "string" }, name: { type: "string" } },
  });
  const [area, command, arg] = positionals;
  if (area === "keys" && command === "create") {
    if (!values.org) fail("keys create needs --org");
    const { key, record } = await createApiKey(store, values.org, values.name ?? "cli");
    process.stdout.write(`${JSON.stringify({ id: record.id, organization: record.organizationId, key })}\n`);
    return;
  }
  if (area === "keys" && command === "list") {
    for (const key of await store.apiKeys.list(values.org)) {
      const { keyHash: _hash, ...shown } = key;
      process.stdout.write(`${JSON.stringify(shown)}\n`);
    }
    return;
  }
  if (area === "keys" && command === "revoke") {
    if (!arg) fail("keys revoke needs a key id");
    if (!(await store.apiKeys.revoke(arg, new Date().toISOString()))) fail(`no active key with id ${arg}`);
    process.stdout.write(`revoked ${arg}\n`);
    return;
  }
  if (area === "hosts" && command === "add") {
    if (!arg || !AGENT_ADDRESS.test(arg)) fail("hosts add needs a host agent address, host:port or unix:/path");
    const added = await store.hosts.register(arg, new Date().toISOString());
    process.stdout.write(`${added ? "added" : "already known"} ${arg}\n`);
    return;
  }
  if (area === "hosts" && command === "list") {
    for (const host of await store.hosts.list()) process.stdout.write(`${JSON.stringify(host)}\n`);
    return;
  }
  if (area === "hosts" && command === "remove") {
    if (!arg) fail("hosts remove needs a host agent address");
    const outcome = await store.hosts.remove(arg);
    if (outcome === "absent") fail(`no host ${arg}`);
    if (outcome === "held") fail(`host ${arg} holds a browser session; delete the session first`);
    process.stdout.write(`removed ${arg}\n`);
    return;
  }
  fail(USAGE);
}

try {
  const config = loadConfig(process.env);
  if (!config.databaseUrl) {
    for (const { path, from, to } of prepareDataDir(config.dataDir)) {
      process.stderr.write(`DATA_DIR: other users could read ${path} (mode ${from}); made it ${to}\n`);
    }
  }
  const store = await openStore(
    config.databaseUrl ? { databaseUrl: config.databaseUrl } : { sqlitePath: sqlitePathIn(config.dataDir) },
  );
  try {
    await run(store, process.argv.slice(2));
  } finally {
    await store.close();
  }
} catch (error) {
  if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
  throw error;
}
