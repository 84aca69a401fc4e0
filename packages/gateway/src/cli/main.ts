#!/usr/bin/env node
import { parseArgs } from "node:util";
import { createApiKey } from "../auth/api-keys.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { newId } from "../store/ids.ts";
import { openStore, type Store, sqlitePathIn } from "../store/store.ts";

const USAGE = `usage: gateway-admin <command>

  keys create --org <organization> [--name <label>]   create an API key; it is printed once
  keys list [--org <organization>]                   list keys (never the keys themselves)
  keys revoke <key id>                               revoke a key at once, on every replica
  sessions create --org <organization> --name <name> --host <host:port>
                                                     bind a browser session to a host agent

The store is the gateway's: DATABASE_URL, or SQLite under DATA_DIR (default ./data).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

async function run(store: Store, argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { org: { type: "string" }, name: { type: "string" }, host: { type: "string" } },
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
  if (area === "sessions" && command === "create") {
    if (!values.org || !values.name || !values.host) fail("sessions create needs --org, --name and --host");
    await store.organizations.ensure(values.org);
    const id = newId();
    await store.browserSessions.insert({
      id,
      organizationId: values.org,
      name: values.name,
      hostAddress: values.host,
      createdAt: new Date().toISOString(),
    });
    process.stdout.write(`${JSON.stringify({ session_id: id, name: values.name, host: values.host })}\n`);
    return;
  }
  fail(USAGE);
}

try {
  const config = loadConfig(process.env);
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
