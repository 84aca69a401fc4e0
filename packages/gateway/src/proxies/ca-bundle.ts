import { X509Certificate } from "node:crypto";

export const MAX_CA_BUNDLE_BYTES = 64 * 1024;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END \1-----/g;

/**
 * Why `pem` cannot be a CA bundle, or undefined when it can: it must be one or
 * more PEM certificates that parse as X.509. Text between blocks is allowed, as
 * in the commented bundles distributions ship. The messages never quote the input.
 */
export function caBundleProblem(pem: string): string | undefined {
  if (Buffer.byteLength(pem, "utf8") > MAX_CA_BUNDLE_BYTES) return "must be at most 64 KiB";
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) return "must be PEM: one or more -----BEGIN CERTIFICATE----- blocks";
  for (const [block, label] of blocks) {
    if (label !== "CERTIFICATE") return `must contain only certificates, found a ${label} block`;
    try {
      new X509Certificate(block);
    } catch {
      return "must contain only valid X.509 certificates";
    }
  }
  return undefined;
}
