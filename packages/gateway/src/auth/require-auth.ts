import type { NextFunction, Request, Response } from "express";
import type { Store } from "../store/store.ts";
import { authenticate, type Principal } from "./api-keys.ts";
import { PrincipalCache } from "./principal-cache.ts";

/** Express middleware: every API route past it has res.locals.principal. */
export function requireAuth(store: Store) {
  const cache = new PrincipalCache();
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    res.locals.principal = await authenticate(store, req.headers.authorization, cache);
    next();
  };
}

export function principalOf(res: Response): Principal {
  return res.locals.principal as Principal;
}
