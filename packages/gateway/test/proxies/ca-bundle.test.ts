import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { caBundleProblem, MAX_CA_BUNDLE_BYTES } from "../../src/proxies/ca-bundle.ts";
import { TEST_TLS } from "./loopback-proxy.ts";

describe("caBundleProblem", () => {
  it("accepts one PEM certificate", () => {
    expect(caBundleProblem(TEST_TLS.ca)).toBeUndefined();
  });

  it("accepts several certificates with comments between them, as distributions ship bundles", () => {
    expect(caBundleProblem(`# test CA\n${TEST_TLS.ca}\n# leaf\n${TEST_TLS.cert}`)).toBeUndefined();
  });

  it("accepts a bundle of exactly 64 KiB", () => {
    const bundle = `${TEST_TLS.ca}${"#".repeat(MAX_CA_BUNDLE_BYTES - Buffer.byteLength(TEST_TLS.ca))}`;
    expect(Buffer.byteLength(bundle)).toBe(64 * 1024);
    expect(caBundleProblem(bundle)).toBeUndefined();
  });

  it("refuses a bundle one byte over 64 KiB", () => {
    const bundle = `${TEST_TLS.ca}${"#".repeat(MAX_CA_BUNDLE_BYTES - Buffer.byteLength(TEST_TLS.ca) + 1)}`;
    expect(caBundleProblem(bundle)).toBe("must be at most 64 KiB");
  });

  it("refuses text without a PEM block", () => {
    expect(caBundleProblem("not a certificate")).toMatch(/must be PEM/);
  });

  it("refuses a PEM block that is not a certificate, such as a private key", () => {
    const key = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" });
    expect(caBundleProblem(`${TEST_TLS.ca}${key}`)).toBe("must contain only certificates, found a PRIVATE KEY block");
  });

  it("refuses a certificate block whose content is not X.509", () => {
    const broken = "-----BEGIN CERTIFICATE-----\nAAAAAAAAAAAAAAAA\n-----END CERTIFICATE-----\n";
    expect(caBundleProblem(broken)).toBe("must contain only valid X.509 certificates");
  });
});
