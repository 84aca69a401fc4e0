import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.ts";
import { loadSecretsKey, SECRETS_KEY_FILE } from "../../src/proxies/secrets-key.ts";

let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "secrets-key-"));
});

afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe("loadSecretsKey", () => {
  it("uses SECRETS_KEY when it is configured, and writes no file", () => {
    const key = randomBytes(32);
    expect(loadSecretsKey({ secretsKey: key, databaseUrl: undefined, dataDir })).toBe(key);
    expect(() => statSync(join(dataDir, SECRETS_KEY_FILE))).toThrow();
  });

  it("generates a 32-byte key in DATA_DIR for the quick start, readable only by its owner", () => {
    const key = loadSecretsKey({ secretsKey: undefined, databaseUrl: undefined, dataDir });
    expect(key).toHaveLength(32);
    const file = join(dataDir, SECRETS_KEY_FILE);
    expect(readFileSync(file, "utf8").trim()).toBe(key.toString("hex"));
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("keeps the generated key across restarts", () => {
    const first = loadSecretsKey({ secretsKey: undefined, databaseUrl: undefined, dataDir });
    expect(loadSecretsKey({ secretsKey: undefined, databaseUrl: undefined, dataDir })).toEqual(first);
  });

  it("creates DATA_DIR when it does not exist yet", () => {
    const nested = join(dataDir, "not", "yet");
    expect(loadSecretsKey({ secretsKey: undefined, databaseUrl: undefined, dataDir: nested })).toHaveLength(32);
  });

  it("refuses to start with DATABASE_URL but no SECRETS_KEY", () => {
    expect(() => loadSecretsKey({ secretsKey: undefined, databaseUrl: "postgres://db/gateway", dataDir })).toThrow(
      new ConfigError(
        "SECRETS_KEY is required with DATABASE_URL (every replica needs the same key); generate one with: openssl rand -hex 32",
      ),
    );
  });

  it("refuses a key file that does not hold a 32-byte hex key", () => {
    writeFileSync(join(dataDir, SECRETS_KEY_FILE), "too short\n");
    expect(() => loadSecretsKey({ secretsKey: undefined, databaseUrl: undefined, dataDir })).toThrow(
      /64 hex characters/,
    );
  });
});
