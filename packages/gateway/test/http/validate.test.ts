import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError, MAX_REPORTED_PROBLEMS } from "../../src/errors.ts";
import { pathParam } from "../../src/http/api-router.ts";
import { parseInput } from "../../src/http/validate.ts";

function problemsOf(schema: z.ZodType, input: unknown): string[] {
  try {
    parseInput(schema, input);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe("bad_request");
    expect(apiError.details?.every((d) => d.code === "invalid_input")).toBe(true);
    return apiError.details?.map((d) => d.message ?? "") ?? [];
  }
  throw new Error("expected a validation failure");
}

describe("parseInput", () => {
  it("returns the parsed value when the input is valid", () => {
    expect(parseInput(z.object({ a: z.number() }), { a: 1 })).toEqual({ a: 1 });
  });

  it("names nested fields with dots and array items with brackets", () => {
    const schema = z.object({ config: z.object({ port: z.number() }), keys: z.array(z.string()) });
    expect(problemsOf(schema, { config: { port: "x" }, keys: ["a", 2] })).toEqual([
      expect.stringMatching(/^config\.port: /),
      expect.stringMatching(/^keys\[1\]: /),
    ]);
  });

  it("reports each unknown field of a strict object on its own", () => {
    expect(problemsOf(z.strictObject({ name: z.string() }), { name: "a", x: 1, y: 2 })).toEqual([
      "x: unknown field",
      "y: unknown field",
    ]);
  });

  it("reports the first problems and how many more there are, not one detail per bad item", () => {
    const found = problemsOf(z.object({ keys: z.array(z.string()) }), { keys: Array(5000).fill(0) });
    expect(found).toHaveLength(MAX_REPORTED_PROBLEMS + 1);
    expect(found[0]).toMatch(/^keys\[0\]: /);
    expect(found.at(-1)).toBe(`and ${5000 - MAX_REPORTED_PROBLEMS} more problems`);
  });

  it("names the whole body when the body itself is wrong", () => {
    expect(problemsOf(z.object({}), "text")).toEqual([expect.stringMatching(/^body: /)]);
  });

  it("refuses a NUL character in any string of the input, naming each field", () => {
    const schema = z.object({
      name: z.string(),
      keys: z.array(z.string()),
      config: z.object({ username: z.string().optional() }),
    });
    expect(problemsOf(schema, { name: "a\0", keys: ["a", "\0b"], config: { username: "c\0" } })).toEqual([
      "name: must not contain a NUL character",
      "keys[1]: must not contain a NUL character",
      "config.username: must not contain a NUL character",
    ]);
  });

  it("refuses a NUL character in a key of a record at the record, not under an unreadable name", () => {
    const schema = z.object({ tags: z.record(z.string(), z.string()) });
    expect(problemsOf(schema, { tags: { "a\0b": "x", ok: "y" } })).toEqual([
      "tags: keys must not contain a NUL character",
    ]);
  });

  it("names query parameters without a root", () => {
    expect(() => parseInput(z.object({ name: z.string() }), { name: "a\0b" }, "query")).toThrow(
      "name: must not contain a NUL character",
    );
  });
});

describe("pathParam", () => {
  const request = (params: Record<string, string>) => ({ params }) as unknown as Request;

  it("returns the parameter as given", () => {
    expect(pathParam(request({ id: "abc" }), "id")).toBe("abc");
  });

  it("refuses a NUL character with 400 bad_request, as every other input", () => {
    expect(() => pathParam(request({ id: "a\0b" }), "id")).toThrow(
      expect.objectContaining({ code: "bad_request", message: "id: must not contain a NUL character" }),
    );
  });
});
