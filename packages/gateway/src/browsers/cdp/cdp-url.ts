import type { BrowserSessionRecord } from "../../store/browser-sessions.ts";
import type { CdpTokens } from "./token.ts";

/** The path a session's DevTools socket is upgraded on; the id is the session's, never its name. */
export const CDP_PATH = /^\/browsers\/([^/]+)\/cdp$/;

/**
 * The WebSocket origin for an http(s) origin: what a client dials for CDP. An unspecified
 * listening address (0.0.0.0, ::) cannot be dialled, so it stands for this machine's loopback.
 */
export function wsOrigin(httpOrigin: string): string {
  const url = new URL(httpOrigin);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  if (url.hostname === "0.0.0.0" || url.hostname === "[::]") url.hostname = "127.0.0.1";
  return url.origin;
}

/**
 * Makes the cdp_ws_url of a session: the gateway's public WebSocket origin, the session's CDP path
 * and a fresh token. An ended session, or one whose host runs no browser, has none ("").
 */
export class CdpUrls {
  readonly #tokens: CdpTokens;
  readonly #origin: () => string;

  /** origin is read at each use: the port is known only once the gateway listens. */
  constructor(tokens: CdpTokens, origin: () => string) {
    this.#tokens = tokens;
    this.#origin = origin;
  }

  of(session: BrowserSessionRecord): string {
    if (session.deletedAt !== null || !session.cdpWsUrl) return "";
    const token = this.#tokens.issue(session.id, session.organizationId);
    return `${this.#origin()}/browsers/${encodeURIComponent(session.id)}/cdp?token=${token}`;
  }
}
