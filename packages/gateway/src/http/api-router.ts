import { type Request, type RequestHandler, Router } from "express";
import type { z } from "zod";
import { ApiError, invalidInput } from "../errors.ts";
import { hasNul, NUL_PROBLEM } from "./validate.ts";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/**
 * One operation of the public API: the route the router serves and what the
 * OpenAPI document says of it, from the same schemas that validate requests.
 */
export interface OperationSpec {
  method: HttpMethod;
  /** OpenAPI path template, e.g. /proxies/{id}; the Express route is derived from it. */
  path: string;
  operationId: string;
  /** The group of spec part 1, e.g. "Proxies". */
  tag: string;
  summary: string;
  /** False for health, readiness, metrics and this document. */
  authenticated?: boolean;
  query?: z.ZodType;
  /**
   * A body of another content type than JSON (application/octet-stream) is left unread for the
   * handler, which streams it: the route is served before the JSON body parser.
   */
  body?: { schema: z.ZodType; required: boolean; contentType?: string };
  response: {
    status: 200 | 201 | 204;
    description: string;
    schema?: z.ZodType;
    /** A non-JSON body, such as the Prometheus text format. */
    contentType?: string;
    headers?: Record<string, string>;
  };
  /** Error statuses besides the 401 and 500 every authenticated operation can answer. */
  errors: readonly number[];
}

export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1");
}

/** An Express router that remembers the spec of every operation it serves. */
export class ApiRouter {
  readonly router: Router = Router();
  /** The routes whose body is not JSON; mounted before the JSON body parser, which would refuse it. */
  readonly rawBodyRouter: Router = Router();
  readonly operations: OperationSpec[] = [];

  add(spec: OperationSpec, handler: RequestHandler): this {
    this.operations.push(spec);
    const router = spec.body?.contentType ? this.rawBodyRouter : this.router;
    router[spec.method](expressPath(spec.path), handler);
    return this;
  }
}

/** The methods an Allow header may list, in its order; Express serves HEAD wherever it serves GET. */
export const SERVED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

/** The paths a template stands for, as Express matches them: in any case, with or without a trailing slash. */
function pathPattern(template: string): RegExp {
  const source = template
    .split(/\{\w+\}/)
    .map((literal) => literal.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
    .join("[^/]+");
  return new RegExp(`^${source}/?$`, "i");
}

/**
 * The handler after every route: a path the API serves with other methods is answered 405 with
 * those methods in Allow (RFC 9110, 15.5.6), any other 404.
 */
export function noRoute(operations: readonly OperationSpec[]): RequestHandler {
  const routes = operations.map((spec) => ({ pattern: pathPattern(spec.path), method: spec.method.toUpperCase() }));
  return (req, res) => {
    const served = new Set(routes.filter((route) => route.pattern.test(req.path)).map((route) => route.method));
    if (served.has("GET")) served.add("HEAD");
    const allow = SERVED_METHODS.filter((method) => served.has(method)).join(", ");
    if (!allow) throw new ApiError("not_found", `no route for ${req.method} ${req.path}`);
    res.setHeader("allow", allow);
    throw new ApiError("method_not_allowed", `${req.method} is not served at ${req.path}; it takes ${allow}`);
  };
}

/** A path parameter the route template guarantees, under the same NUL rule as every other input. */
export function pathParam(req: Request, name: string): string {
  const value = req.params[name];
  if (typeof value !== "string") throw new Error(`route has no parameter ${name}`);
  if (hasNul(value)) throw invalidInput([`${name}: ${NUL_PROBLEM}`]);
  return value;
}
