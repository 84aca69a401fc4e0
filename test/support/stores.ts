import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { openStore, type Store, type StoreLocation } from "../../packages/gateway/src/store/store.ts";
import { createDatabase } from "./postgres.ts";

export const STORE_KINDS = ["sqlite", "postgres"] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** A fresh, empty, migrated store of the given kind, and how to throw it away. */
export async function freshStoreLocation(kind: StoreKind): Promise<{ location: StoreLocation; cleanup(): void }> {
  if (kind === "postgres") {
    return { location: { databaseUrl: await createDatabase(inject("postgresUrl")) }, cleanup: () => {} };
  }
  const dir = mkdtempSync(join(tmpdir(), "store-test-"));
  return {
    location: { sqlitePath: join(dir, "gateway.db") },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export async function freshStore(
  kind: StoreKind,
): Promise<{ store: Store; location: StoreLocation; dispose(): Promise<void> }> {
  const { location, cleanup } = await freshStoreLocation(kind);
  const store = await openStore(location);
  return {
    store,
    location,
    dispose: async () => {
      await store.close();
      cleanup();
    },
  };
}

const STORE_MODULE = new URL("../../packages/gateway/src/store/store.ts", import.meta.url).href;

/** Opens (and so migrates) the store in a separate Node process, as a gateway replica would. */
export function openStoreInProcess(location: StoreLocation): Promise<void> {
  const script = `const { openStore } = await import(${JSON.stringify(STORE_MODULE)});
    const store = await openStore(JSON.parse(process.env.STORE_LOCATION));
    await store.close();`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", script],
      { env: { ...process.env, STORE_LOCATION: JSON.stringify(location) } },
      (error, _stdout, stderr) => (error ? reject(new Error(`replica failed: ${stderr}`)) : resolve()),
    );
  });
}
