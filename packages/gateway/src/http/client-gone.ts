import type { Response } from "express";

/**
 * Aborted when the client goes away before its answer was written, so work done on its behalf
 * (a host agent call, a key hold) is cancelled rather than finished for nobody.
 */
export function abortedWhenClientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
