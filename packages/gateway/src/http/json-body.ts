import type { NextFunction, Request, Response } from "express";
import express from "express";
import { ApiError } from "../errors.ts";

export const BODY_LIMIT_BYTES = 1024 * 1024;

function hasBody(req: Request): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

/** A request that carries a body must say it is JSON; anything else is refused before it is read. */
function requireJsonContentType(req: Request, _res: Response, next: NextFunction): void {
  if (hasBody(req) && !req.is(["application/json", "application/*+json"])) {
    throw new ApiError("invalid_request", "Content-Type must be application/json");
  }
  next();
}

export const jsonBody = [requireJsonContentType, express.json({ limit: BODY_LIMIT_BYTES, strict: true })];
