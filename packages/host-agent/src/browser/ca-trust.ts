import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

async function run(command: string, args: string[]): Promise<void> {
  try {
    await execFileAsync(command, args);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    throw new Error(
      missing
        ? "certutil is missing: a proxy's CA bundle needs it (Debian/Ubuntu: apt-get install libnss3-tools, or run scripts/setup.sh)"
        : `certutil failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Makes the CAs of a PEM bundle trusted by a browser whose HOME is `home`: Chromium on Linux reads
 * the user's NSS database ($HOME/.pki/nssdb) at start, and trusts its CAs for sites besides the
 * public roots. It is how a session trusts its TLS-intercepting proxy, and only that session: the
 * database is in the browser's own directory, deleted with it. Needs certutil (Debian's
 * libnss3-tools), which scripts/setup.sh installs.
 */
export async function trustCertificates(home: string, bundle: string): Promise<void> {
  const certificates = [...bundle.matchAll(PEM_CERTIFICATE)].map(([pem]) => pem);
  if (certificates.length === 0) return;
  const database = join(home, ".pki", "nssdb");
  await mkdir(database, { recursive: true, mode: 0o700 });
  await run("certutil", ["-N", "--empty-password", "-d", `sql:${database}`]);
  for (const [index, pem] of certificates.entries()) {
    const file = join(database, `ca-${index}.pem`);
    await writeFile(file, `${pem}\n`, { mode: 0o600 });
    // "C,,": a CA trusted to issue server certificates.
    await run("certutil", ["-A", "-n", `session-ca-${index}`, "-t", "C,,", "-a", "-i", file, "-d", `sql:${database}`]);
  }
}
