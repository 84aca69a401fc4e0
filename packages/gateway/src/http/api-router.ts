import { type Request, type RequestHandler, Router } from "express";
import type { z } from "zod";

export type HttpMethod = "get" | "post" | "patch" | "delete";

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
  body?: { schema: z.ZodType; required: boolean };
  response: {
    status: 200 | 204;
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
  readonly operations: OperationSpec[] = [];

  add(spec: OperationSpec, handler: RequestHandler): this {
    this.operations.push(spec);
    this.router[spec.method](expressPath(spec.path), handler);
    return this;
  }
}

/** A path parameter the route template guarantees. */
export function pathParam(req: Request, name: string): string {
  const value = req.params[name];
  if (typeof value !== "string") throw new Error(`route has no parameter ${name}`);
  return value;
}
