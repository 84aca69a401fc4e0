/**
 * Why a CDP socket closed, with the close code and reason text the gateway sends (none when the
 * client closed it or stopped answering pings: a socket that does not answer is cut off). The keys
 * are the `reason` label of gateway_cdp_closes_total.
 */
export const CLOSE_REASONS = {
  client_closed: undefined,
  ping_timeout: undefined,
  /** The session was deleted, reached its idle timeout, or its browser died. */
  session_ended: { code: 1001, text: "browser session ended" },
  /** Chromium closed this DevTools connection (the browser is still running). */
  browser_closed: { code: 1000, text: "the browser closed the DevTools connection" },
  /** The session's host agent cannot be reached, or the stream to it failed. */
  host_unavailable: { code: 1011, text: "the browser's host is unreachable" },
  /** More than 4 MiB waited to be written to the client from one ping to the next. */
  slow_client: { code: 1008, text: "client too slow: CDP data waited unread for a whole ping interval" },
  /** The client broke the WebSocket protocol or sent a message over the size limit (ws sent the close). */
  protocol_error: undefined,
  gateway_shutdown: { code: 1001, text: "the gateway is shutting down" },
} as const satisfies Record<string, { code: number; text: string } | undefined>;

export type CloseReason = keyof typeof CLOSE_REASONS;

/** The detail (the agent's own words, say) or else the reason's text; at most 123 bytes of UTF-8, as WebSocket allows. */
export function closeText(reason: CloseReason, detail?: string): string {
  const text = detail || (CLOSE_REASONS[reason]?.text ?? "");
  const bytes = Buffer.from(text);
  return bytes.length <= 123
    ? text
    : `${bytes
        .subarray(0, 120)
        .toString("utf8")
        .replace(/\uFFFD$/, "")}...`;
}
