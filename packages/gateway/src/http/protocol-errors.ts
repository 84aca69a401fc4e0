import { type IncomingMessage, type Server, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ERROR_TABLE, type ErrorCode } from "../errors.ts";
import { SERVED_METHODS } from "./api-router.ts";

function parserErrorCode(error: NodeJS.ErrnoException): ErrorCode {
  if (error.code === "HPE_HEADER_OVERFLOW") return "headers_too_large";
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return "request_timeout";
  return "invalid_request";
}

/**
 * An Error body answer written straight to a socket that Express does not serve (a request the
 * parser refused, a WebSocket upgrade). A HEAD request gets the head of the response only: its
 * client reads no body.
 */
export function rawErrorResponse(
  code: ErrorCode,
  message: string,
  options: { head?: boolean; retry?: boolean; requestId?: string; allow?: string } = {},
): string {
  const { status } = ERROR_TABLE[code];
  const body = JSON.stringify({ code, message });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n` +
    "Content-Type: application/json; charset=utf-8\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `x-should-retry: ${options.retry ?? ERROR_TABLE[code].retry}\r\n` +
    (options.requestId ? `x-request-id: ${options.requestId}\r\n` : "") +
    (options.allow ? `Allow: ${options.allow}\r\n` : "") +
    "Connection: close\r\n\r\n" +
    (options.head ? "" : body)
  );
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (a malformed
 * request line or header, headers over 16 KiB, a client too slow to send its
 * request, an Expect other than 100-continue, CONNECT) still get the Error body.
 */
export function answerProtocolErrors(server: Server): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already on its way (garbage after a complete request) must not be followed by a second one.
    const answered = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === "ECONNRESET" || !socket.writable || answered) {
      socket.destroy();
      return;
    }
    const code = parserErrorCode(error);
    const message =
      code === "headers_too_large"
        ? "request headers are too large"
        : code === "request_timeout"
          ? "the request did not arrive in time"
          : "the request is not valid HTTP";
    const rawPacket = (error as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket;
    socket.end(rawErrorResponse(code, message, { head: rawPacket?.subarray(0, 5).toString("latin1") === "HEAD " }));
  });
  // Node hands CONNECT to a "connect" listener and, without one, closes the socket unanswered.
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    socket.on("error", () => socket.destroy());
    socket.end(
      rawErrorResponse("method_not_allowed", "CONNECT is not served: the gateway is not a proxy", {
        allow: SERVED_METHODS.join(", "),
      }),
    );
  });
  server.on("checkExpectation", (req, res) => {
    const body = JSON.stringify({
      code: "expectation_failed",
      message: `unsupported Expect header: ${String(req.headers.expect).slice(0, 100)}`,
    });
    res.writeHead(ERROR_TABLE.expectation_failed.status, {
      "content-type": "application/json; charset=utf-8",
      "x-should-retry": "false",
      connection: "close",
    });
    res.end(body);
  });
}
