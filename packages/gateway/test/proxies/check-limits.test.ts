import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../src/errors.ts";
import { ProxyCheckLimits } from "../../src/proxies/check-limits.ts";

const LONGEST_CHECK_MS = 10_000;

function refusal(begin: () => unknown): ApiError {
  try {
    begin();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected the check to be refused");
}

describe("ProxyCheckLimits", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("refuses a check beyond the concurrent limit until one running has ended, with Retry-After when the oldest must have", () => {
    const limits = new ProxyCheckLimits({ concurrent: 2, perMinute: 100 }, LONGEST_CHECK_MS);
    const endFirst = limits.begin("acme");
    vi.advanceTimersByTime(3_000);
    limits.begin("acme");
    const refused = refusal(() => limits.begin("acme"));
    expect(refused).toMatchObject({ code: "too_many_requests", retryAfterSeconds: 7 });
    expect(refused.message).toContain("2 proxy checks");
    endFirst();
    // Ending twice frees one place, not two.
    endFirst();
    limits.begin("acme");
    expect(() => limits.begin("acme")).toThrow(ApiError);
  });

  it("refuses a check beyond the per-minute limit until the oldest start is a minute old", () => {
    const limits = new ProxyCheckLimits({ concurrent: 10, perMinute: 3 }, LONGEST_CHECK_MS);
    for (let i = 0; i < 3; i++) {
      limits.begin("acme")();
      vi.advanceTimersByTime(10_000);
    }
    const refused = refusal(() => limits.begin("acme"));
    expect(refused).toMatchObject({ code: "too_many_requests", retryAfterSeconds: 30 });
    expect(refused.message).toContain("3 proxy checks within the last minute");
    vi.advanceTimersByTime(29_999);
    expect(() => limits.begin("acme")).toThrow(ApiError);
    vi.advanceTimersByTime(1);
    expect(() => limits.begin("acme")()).not.toThrow();
  });

  it("counts each organization's checks apart, and a refused check not at all", () => {
    const limits = new ProxyCheckLimits({ concurrent: 1, perMinute: 2 }, LONGEST_CHECK_MS);
    const end = limits.begin("acme");
    expect(() => limits.begin("acme")).toThrow(ApiError);
    expect(() => limits.begin("globex")).not.toThrow();
    end();
    expect(() => limits.begin("acme")).not.toThrow();
  });

  it("forgets an organization once its checks have ended and are a minute old, leaving no timer", () => {
    const limits = new ProxyCheckLimits({ concurrent: 1, perMinute: 1 }, LONGEST_CHECK_MS);
    limits.begin("acme")();
    limits.begin("globex")();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(60_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("keeps a running check remembered past the minute, and then forgets it", () => {
    const limits = new ProxyCheckLimits({ concurrent: 1, perMinute: 100 }, LONGEST_CHECK_MS);
    const end = limits.begin("acme");
    vi.advanceTimersByTime(60_000);
    expect(() => limits.begin("acme")).toThrow(ApiError);
    end();
    vi.advanceTimersByTime(60_000);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("ProxyCheckLimits with real timers", () => {
  it("keeps no timer that would hold the process open", () => {
    const limits = new ProxyCheckLimits({ concurrent: 1, perMinute: 1 }, LONGEST_CHECK_MS);
    const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === "Timeout").length;
    const before = timers();
    limits.begin("acme")();
    expect(timers()).toBe(before);
  });
});
