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
 * Validates input against a schema; on failure throws a 400 bad_request with
 * one invalid_input detail per problem, in the form "<field>: <what is wrong>".
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root = "body"): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalidInput(result.error.issues.flatMap((issue) => problems(issue, root)));
}
