import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { callerRequestIdOf, requestIdOf } from "../../src/http/request-id.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY = "sk_Zm9vYmFyYmF6cXV4LWtleS1mb3ItdGVzdHMtb25seQ_";

const request = (id?: string) => ({ headers: id === undefined ? {} : { "x-request-id": id } }) as IncomingMessage;

describe("request ids", () => {
  it("keeps a caller's id of 1 to 64 letters, digits, '.', ':' and '-' starting with a letter or digit", () => {
    for (const id of [
      "a",
      "0f8b6c1e-1f2a-4b3c-8d4e-5f6a7b8c9d0e",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "trace.2024:01",
      "x".repeat(64),
    ]) {
      expect(requestIdOf(request(id))).toBe(id);
      expect(callerRequestIdOf(request(id).headers)).toBeUndefined();
    }
  });

  it("generates an id for any other, and gives the caller's for the log beside it", () => {
    for (const id of ["has space", "under_score", "-leading", "x".repeat(65), 'a"}\n{"level":60', "é"]) {
      expect(requestIdOf(request(id))).toMatch(UUID);
      expect(callerRequestIdOf(request(id).headers)).toBe(id);
    }
  });

  it("cuts a refused id to 128 characters and masks an API key in it", () => {
    expect(callerRequestIdOf(request("y".repeat(5000)).headers)).toBe("y".repeat(128));
    expect(requestIdOf(request(KEY))).toMatch(UUID);
    expect(callerRequestIdOf(request(KEY).headers)).toBe("[redacted]");
  });

  it("generates an id, and logs nothing beside it, when the caller sent none", () => {
    for (const id of [undefined, ""]) {
      expect(requestIdOf(request(id))).toMatch(UUID);
      expect(callerRequestIdOf(request(id).headers)).toBeUndefined();
    }
  });
});
