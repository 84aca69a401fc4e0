import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { Code, MAX_CDP_MESSAGE_BYTES, RpcError, toRpcError } from "@browser-infra/contract";
import type { ServiceError } from "@grpc/grpc-js";
import { WebSocketServer } from "ws";
import { ApiError, notFound } from "../../errors.ts";
import { hostCallError } from "../../hosts/host-errors.ts";
import type { HostPool } from "../../hosts/host-pool.ts";
import { toApiError } from "../../http/error-body.ts";
import { loggedUrl } from "../../http/log-redaction.ts";
import { rawErrorResponse } from "../../http/protocol-errors.ts";
import { callerRequestIdOf, requestIdOf } from "../../http/request-id.ts";
import type { Logger } from "../../logger.ts";
import type { BrowserSessionRecord } from "../../store/browser-sessions.ts";
import type { Store } from "../../store/store.ts";
import { cdpMetrics } from "./cdp-metrics.ts";
import { CDP_PATH } from "./cdp-url.ts";
import { CdpConnection, type CdpStream } from "./connection.ts";
import type { CdpSockets } from "./sockets.ts";
import type { CdpTokens } from "./token.ts";

export interface CdpUpgradeDeps {
  store: Store;
  hosts: HostPool;
  tokens: CdpTokens;
  sockets: CdpSockets;
  /** How long the agent may take to open its DevTools connection. */
  agentTimeoutMs: number;
  logger: Logger;
}

function sessionIdIn(pathname: string): string {
  const [, raw] = CDP_PATH.exec(pathname) ?? [];
  if (raw === undefined) throw new ApiError("not_found", "no WebSocket endpoint here: CDP is at /browsers/{id}/cdp");
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ApiError("invalid_request", "the path's percent-encoding is invalid");
  }
}

/** Whether a request is a WebSocket upgrade to a session's CDP path: the only upgrades the gateway takes. */
export function isCdpUpgrade(req: IncomingMessage): boolean {
  return (
    (req.headers.upgrade ?? "").toLowerCase() === "websocket" &&
    CDP_PATH.test(new URL(req.url ?? "/", "http://gateway.invalid").pathname)
  );
}

/**
 * ws would refuse these handshakes itself, but only once the agent's DevTools connection was
 * opened for nothing: they are refused first.
 */
function checkHandshake(req: IncomingMessage): void {
  const key = req.headers["sec-websocket-key"];
  const version = req.headers["sec-websocket-version"];
  if (req.method !== "GET" || !key || !/^[+/0-9A-Za-z]{22}==$/.test(key) || (version !== "13" && version !== "8")) {
    throw new ApiError(
      "invalid_request",
      "not a valid WebSocket handshake (GET, Sec-WebSocket-Key, Sec-WebSocket-Version 13)",
    );
  }
}

/** The active session the request's token grants, or the refusal: 401 for the token itself, 404 for the session. */
async function grantedSession(deps: CdpUpgradeDeps, req: IncomingMessage): Promise<BrowserSessionRecord> {
  const url = new URL(req.url ?? "/", "http://gateway.invalid");
  const sessionId = sessionIdIn(url.pathname);
  checkHandshake(req);
  const token = url.searchParams.get("token");
  if (!token) {
    throw new ApiError("unauthorized", "the CDP URL has no token: connect to the session's cdp_ws_url as it is");
  }
  const check = deps.tokens.check(token);
  if ("refused" in check) {
    throw new ApiError(
      "unauthorized",
      check.refused === "expired"
        ? "the CDP token has expired: get the session again for a fresh cdp_ws_url"
        : "the CDP token is not valid",
    );
  }
  // A token of another session, of another organization's, or of an ended session: that session is not there.
  const session =
    check.grant.sessionId === sessionId ? await deps.store.browserSessions.findActiveById(sessionId) : undefined;
  if (!session || session.organizationId !== check.grant.organizationId || !session.cdpWsUrl) {
    throw notFound(`browser session "${sessionId}"`);
  }
  return session;
}

/** The client hung up during the upgrade: nobody to answer, and no refusal to count. */
class ClientGone extends Error {}

/** An open DevTools stream, and its failure if one came before anyone listened for it. */
interface OpenedStream {
  stream: CdpStream;
  failed: () => ServiceError | undefined;
}

/**
 * Opens the agent's DevTools connection for the session and waits for it to say "connected". The
 * stream is left paused, so nothing is lost before the client's socket is bridged to it.
 */
function openStream(
  deps: CdpUpgradeDeps,
  session: BrowserSessionRecord,
  requestId: string,
  clientGone: AbortSignal,
): Promise<OpenedStream> {
  if (clientGone.aborted) return Promise.reject(new ClientGone());
  const stream: CdpStream = deps.hosts.client(session.hostAddress).cdp({ requestId });
  // A stream that fails or is cancelled emits "error" (even while paused); it is kept for the
  // connection, which may start listening only after it came.
  let failure: ServiceError | undefined;
  stream.on("error", (error: ServiceError) => {
    failure ??= error;
  });
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      stream.off("data", onData);
      stream.off("error", onError);
      clientGone.removeEventListener("abort", onGone);
      outcome();
    };
    const onData = (response: { connected: boolean }) => {
      if (!response.connected) return;
      stream.pause();
      settle(() => resolve({ stream, failed: () => failure }));
    };
    const onError = (error: ServiceError) =>
      settle(() =>
        reject(
          // The agent runs the session no more: it ended between the store's word and now.
          error.code === Code.ABORTED
            ? notFound(`browser session "${session.id}"`)
            : hostCallError(toRpcError(error), session.hostAddress, false, session.id),
        ),
      );
    const onGone = () => {
      stream.cancel();
      settle(() => reject(new ClientGone()));
    };
    const timer = setTimeout(() => {
      stream.cancel();
      settle(() =>
        reject(
          hostCallError(new RpcError(Code.DEADLINE_EXCEEDED, "no answer"), session.hostAddress, false, session.id),
        ),
      );
    }, deps.agentTimeoutMs);
    stream.on("data", onData);
    stream.once("error", onError);
    clientGone.addEventListener("abort", onGone, { once: true });
    stream.write({ sessionId: session.id });
  });
}

/**
 * The gateway server's "upgrade" listener: a WebSocket to /browsers/{id}/cdp?token=… becomes a
 * DevTools connection to the session's browser. Any replica serves it (the token's key is shared,
 * the session is read from the store). Refusals are plain HTTP answers with the Error body.
 */
export function cdpUpgrades(deps: CdpUpgradeDeps): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const server = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_CDP_MESSAGE_BYTES });
  return (req, socket, head) => {
    if (deps.sockets.closed) {
      socket.destroy();
      return;
    }
    const requestId = requestIdOf(req);
    // The token is in the query string: only the path is ever logged.
    const path = loggedUrl((req.url ?? "/").split("?")[0] ?? "/");
    const log = deps.logger.child({ reqId: requestId, callerReqId: callerRequestIdOf(req.headers) });
    socket.on("error", () => socket.destroy());
    const gone = new AbortController();
    socket.once("close", () => gone.abort());
    grantedSession(deps, req)
      .then(async (session) => ({ session, ...(await openStream(deps, session, requestId, gone.signal)) }))
      .then(
        ({ session, stream, failed }) => {
          if (gone.signal.aborted) {
            stream.cancel();
            return;
          }
          let upgraded = false;
          server.handleUpgrade(req, socket, head, (ws) => {
            upgraded = true;
            // Added even when the gateway began to shut down meanwhile: add() closes it then.
            deps.sockets.add(new CdpConnection(ws, stream, session, deps.sockets, failed()));
            deps.sockets.activity(session);
          });
          // ws refused the handshake itself (a bad Sec-WebSocket-Key, say) and answered 400.
          if (!upgraded) stream.cancel();
        },
        (error: unknown) => {
          if (error instanceof ClientGone || gone.signal.aborted) {
            socket.destroy();
            return;
          }
          const apiError = toApiError(error);
          cdpMetrics.refused(apiError.status);
          if (apiError.code === "internal_error") log.error({ err: error, path }, "cdp upgrade failed");
          else
            log.info(
              { path, status: apiError.status, code: apiError.code },
              `cdp upgrade refused: ${apiError.message}`,
            );
          if (!socket.writable) {
            socket.destroy();
            return;
          }
          socket.end(rawErrorResponse(apiError.code, apiError.message, { retry: apiError.retry, requestId }));
        },
      );
  };
}
