import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ConfigError, type GatewayConfig } from "../config.ts";

export const SECRETS_KEY_FILE = "secrets.key";

/**
 * Written aside, then linked into place: link fails when the key exists, so when two
 * processes start on a fresh DATA_DIR one key wins and neither reads a half-written file.
 */
function createKeyFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const draft = `${path}.${process.pid}.tmp`;
  writeFileSync(draft, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600 });
  try {
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * The key that seals proxy secrets at rest. SECRETS_KEY wins. Without it, the
 * quick start (SQLite) generates a key once and keeps it beside the database
 * in DATA_DIR/secrets.key (mode 0600), so later runs can open what earlier
 * runs stored. With DATABASE_URL the key must be configured: replicas share
 * the database, so they must share the key.
 */
export function loadSecretsKey(config: Pick<GatewayConfig, "secretsKey" | "databaseUrl" | "dataDir">): Buffer {
  if (config.secretsKey) return config.secretsKey;
  if (config.databaseUrl) {
    throw new ConfigError(
      "SECRETS_KEY is required with DATABASE_URL (every replica needs the same key); generate one with: openssl rand -hex 32",
    );
  }
  const path = join(config.dataDir, SECRETS_KEY_FILE);
  if (!existsSync(path)) createKeyFile(path);
  const hex = readFileSync(path, "utf8").trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new ConfigError(`${path} must hold a 32-byte key as 64 hex characters`);
  return Buffer.from(hex, "hex");
}
