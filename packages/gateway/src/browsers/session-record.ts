import { z } from "zod";
import type { BrowserSessionRecord } from "../store/browser-sessions.ts";
import type { CdpUrls } from "./cdp/cdp-url.ts";

/**
 * A browser session as @onkernel/sdk reads it. Fields that mean nothing on a self-hosted host
 * keep the SDK's types with a truthful value: `webdriver_ws_url` is "" (no WebDriver BiDi
 * endpoint), `stealth` is false, and `cdp_ws_url` is "" for an ended session and on a host that
 * runs no browser (AGENT_CHROMIUM_PATH=none). Optional fields with nothing to say are omitted.
 */
export const BrowserSession = z.object({
  session_id: z.string(),
  name: z.string().optional(),
  created_at: z.string(),
  deleted_at: z.string().optional(),
  /** Why an ended session ended ("deleted", "idle timeout", "the browser was killed by SIGKILL"…); an extension of this service. */
  end_reason: z.string().optional(),
  cdp_ws_url: z
    .string()
    .describe(
      "WebSocket URL of the session's browser for the Chrome DevTools Protocol, on this gateway, with a token that opens this session's DevTools and nothing else; a fresh token with every read of the session. Empty for an ended session.",
    ),
  webdriver_ws_url: z.string(),
  /** The host has no X display. */
  headless: z.boolean(),
  stealth: z.boolean(),
  timeout_seconds: z.number().int(),
  proxy_id: z.string().optional(),
  tags: z.record(z.string(), z.string()).optional(),
  /** The browser window's size; omitted when unknown (a host without a browser). */
  viewport: z.object({ width: z.number().int(), height: z.number().int() }).optional(),
});
export type BrowserSession = z.infer<typeof BrowserSession>;

export function toBrowserSession(session: BrowserSessionRecord, cdpUrls: CdpUrls): BrowserSession {
  return {
    session_id: session.id,
    ...(session.name !== null && { name: session.name }),
    created_at: session.createdAt,
    ...(session.deletedAt !== null && { deleted_at: session.deletedAt }),
    ...(session.endReason !== null && { end_reason: session.endReason }),
    cdp_ws_url: cdpUrls.of(session),
    webdriver_ws_url: "",
    headless: session.headless,
    stealth: false,
    timeout_seconds: session.timeoutSeconds,
    ...(session.proxyId !== null && { proxy_id: session.proxyId }),
    ...(session.tags !== null && { tags: session.tags }),
    ...(session.viewport !== null && { viewport: session.viewport }),
  };
}
