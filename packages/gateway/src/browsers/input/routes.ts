import type { ApiRouter } from "../../http/api-router.ts";
import type { BrowserRouteDeps } from "../routes.ts";

// SCAFFOLD (replaced by issue #16's work).
export function addInputRoutes(_api: ApiRouter, _deps: BrowserRouteDeps): void {}
