import { describe, expect, it } from "vitest";
import { formatRfc3339Nano } from "../../src/browsers/rfc3339.ts";

describe("formatRfc3339Nano", () => {
  it("prints all nine digits when the last is not zero", () => {
    expect(formatRfc3339Nano(1_700_000_000n, 123_456_789)).toBe("2023-11-14T22:13:20.123456789Z");
  });

  it("trims trailing zeros as Go's RFC3339Nano does", () => {
    expect(formatRfc3339Nano(1_700_000_000n, 120_000_000)).toBe("2023-11-14T22:13:20.12Z");
  });

  it("keeps leading zeros of the fraction", () => {
    expect(formatRfc3339Nano(1_700_000_000n, 5)).toBe("2023-11-14T22:13:20.000000005Z");
  });

  it("omits the fraction for whole seconds", () => {
    expect(formatRfc3339Nano(0n, 0)).toBe("1970-01-01T00:00:00Z");
  });
});
