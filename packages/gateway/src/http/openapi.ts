import { z } from "zod";
import { ErrorBody } from "../errors.ts";
import type { OperationSpec } from "./api-router.ts";

/** Spec part 9: the interface description carries version 0.1.0. */
export const API_VERSION = "0.1.0";

type JsonSchema = Record<string, unknown>;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Bad request: invalid JSON (invalid_request) or invalid input (bad_request with invalid_input details)",
  401: "Missing or invalid authorization token (unauthorized)",
  403: "The host refused access to the path (forbidden)",
  404: "Resource not found, or another organization's (not_found)",
  409: "Conflict with an existing resource, or a file or directory in the way (conflict)",
  413: "Request body over 1 MiB of JSON, or a write_file body over MAX_UPLOAD_BYTES (payload_too_large)",
  500: "Internal server error (internal_error)",
  502: "Host agent unreachable (host_unavailable)",
  503: "Store, display or hosts unavailable (store_unavailable, display_unavailable, no_host_available)",
  504: "Host agent did not answer in time (host_timeout)",
  507: "No space left on the host's file system (insufficient_storage)",
};

function requestSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  return json;
}

function responseSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as JsonSchema;
  return json;
}

function pathParameters(path: string): JsonSchema[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
}

function queryParameters(query: z.ZodType | undefined): JsonSchema[] {
  if (!query) return [];
  const json = requestSchema(query) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    schema,
  }));
}

function operationObject(spec: OperationSpec): JsonSchema {
  const authenticated = spec.authenticated ?? true;
  const errorStatuses = [...new Set([...spec.errors, ...(authenticated ? [401, 500] : [])])].sort((a, b) => a - b);
  const success: JsonSchema = { description: spec.response.description };
  if (spec.response.schema) {
    success.content = {
      [spec.response.contentType ?? "application/json"]: { schema: responseSchema(spec.response.schema) },
    };
  }
  if (spec.response.headers) {
    success.headers = Object.fromEntries(
      Object.entries(spec.response.headers).map(([name, description]) => [
        name,
        { description, schema: { type: "string" } },
      ]),
    );
  }
  const operation: JsonSchema = {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    security: authenticated ? [{ bearerAuth: [] }] : [],
    parameters: [...pathParameters(spec.path), ...queryParameters(spec.query)],
    responses: {
      [String(spec.response.status)]: success,
      ...Object.fromEntries(
        errorStatuses.map((status) => [
          String(status),
          {
            description: ERROR_DESCRIPTIONS[status] ?? "Error",
            content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
          },
        ]),
      ),
    },
  };
  if (spec.body) {
    operation.requestBody = {
      required: spec.body.required,
      content: { [spec.body.contentType ?? "application/json"]: { schema: requestSchema(spec.body.schema) } },
    };
  }
  return operation;
}

/** The OpenAPI 3.1 description of every operation the gateway serves. */
export function openApiDocument(operations: readonly OperationSpec[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const spec of operations) {
    paths[spec.path] ??= {};
    (paths[spec.path] as Record<string, JsonSchema>)[spec.method] = operationObject(spec);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Browser infrastructure gateway",
      version: API_VERSION,
      description:
        "Self-hosted browser infrastructure for AI agents: proxies, browser sessions, key presses and file information.",
    },
    servers: [{ url: "/" }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API key" } },
      schemas: { Error: responseSchema(ErrorBody) },
    },
  };
}
