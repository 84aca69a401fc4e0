import type { z } from "zod";
import { invalidInput } from "../errors.ts";

function fieldPath(path: readonly PropertyKey[], root: string): string {
  if (path.length === 0) return root;
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function problems(issue: z.core.$ZodIssue, root: string): string[] {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => `${fieldPath([...issue.path, key], root)}: unknown field`);
  }
  return [`${fieldPath(issue.path, root)}: ${issue.message}`];
}

/**
 * No string of a request may hold a NUL character: PostgreSQL cannot store or even compare one
 * (it refuses the whole statement), so without this rule the same request would work on SQLite
 * and fail with a 500 on PostgreSQL. No name, id, tag or path has any use for one.
 */
export const NUL_PROBLEM = "must not contain a NUL character";

export function hasNul(text: string): boolean {
  return text.includes("\0");
}

/** Every string in a parsed value that holds a NUL, object keys included. */
function nulProblems(value: unknown, path: PropertyKey[], root: string): string[] {
  if (typeof value === "string") return hasNul(value) ? [`${fieldPath(path, root)}: ${NUL_PROBLEM}`] : [];
  if (typeof value !== "object" || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => nulProblems(item, [...path, index], root));
  return Object.entries(value).flatMap(([key, item]) =>
    // The key itself would make an unreadable field name: the problem is reported at its object.
    hasNul(key) ? [`${fieldPath(path, root)}: keys ${NUL_PROBLEM}`] : nulProblems(item, [...path, key], root),
  );
}

/**
 * Validates input against a schema, then refuses any string in it with a NUL; on failure throws
 * a 400 bad_request with one invalid_input detail per problem, in the form "<field>: <what is
 * wrong>". The parsed value is walked, not the input: its shape is the schema's, so the walk is
 * as shallow as the schema however deep the input was nested.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root = "body"): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw invalidInput(result.error.issues.flatMap((issue) => problems(issue, root)));
  const nul = nulProblems(result.data, [], root);
  if (nul.length > 0) throw invalidInput(nul);
  return result.data;
}
