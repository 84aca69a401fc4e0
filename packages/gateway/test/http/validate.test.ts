import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError, MAX_REPORTED_PROBLEMS } from "../../src/errors.ts";
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
});
