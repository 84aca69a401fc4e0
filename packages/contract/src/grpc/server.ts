import { randomUUID } from "node:crypto";
import type { DescMethod, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import {
  type Metadata,
  type Server,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { keptRequestId, REQUEST_ID_KEY, refusedRequestId } from "./metadata.ts";
import { RpcError } from "./rpc-error.ts";
import { serviceDefinition } from "./service-definition.ts";

/** What a handler knows about the call besides its request message. */
export interface CallContext {
  readonly method: string;
  /** The caller's request id when it sent a well-formed one, a new one when it sent another, else none. */
  readonly requestId: string | undefined;
  /** What the caller sent as its request id when that was refused: for the log line only. */
  readonly callerRequestId: string | undefined;
  /** Aborted when the caller cancels or its deadline passes. */
  readonly signal: AbortSignal;
}

/** The server's side of a bidirectional stream: grpc-js's duplex of messages (it writes init shapes too). */
export type ServerBidiStream<In, Out> = ServerDuplexStream<In, Out>;

/**
 * A unary handler returns its response. A bidirectional handler owns its stream until its
 * promise settles: resolving ends the call with OK, throwing RpcError ends it with that status.
 */
export type ServiceImplementation<S extends GenServiceMethods> = {
  [K in keyof S]: S[K]["methodKind"] extends "bidi_streaming"
    ? (
        stream: ServerBidiStream<MessageShape<S[K]["input"]>, MessageInitShape<S[K]["output"]>>,
        context: CallContext,
      ) => Promise<void>
    : (request: MessageShape<S[K]["input"]>, context: CallContext) => Promise<MessageInitShape<S[K]["output"]>>;
};

export interface RegisterOptions {
  /** Told about every finished call, for logs and metrics. */
  onCallEnd?: (context: CallContext, outcome: { code: status; error?: unknown; durationMs: number }) => void;
}

/**
 * The rule the gateway applies to X-Request-Id: the caller's id when it has the shape, otherwise a
 * new one with what the caller sent beside it; no id when the caller sent none.
 */
function requestIdsOf(metadata: Metadata): Pick<CallContext, "requestId" | "callerRequestId"> {
  const sent = metadata.get(REQUEST_ID_KEY)[0];
  const callerRequestId = refusedRequestId(sent);
  return {
    requestId: keptRequestId(sent) ?? (callerRequestId === undefined ? undefined : randomUUID()),
    callerRequestId,
  };
}

/**
 * Serves a protobuf-es service on a grpc-js server. Handlers return a
 * message init shape or throw RpcError; anything else thrown becomes
 * INTERNAL without its message leaving the process.
 */
export function registerService<S extends GenServiceMethods>(
  server: Server,
  service: GenService<S>,
  implementation: ServiceImplementation<S>,
  options: RegisterOptions = {},
): void {
  type AnyHandler = (first: unknown, context: CallContext) => Promise<unknown>;
  type AnyCall = ServerUnaryCall<unknown, unknown> | ServerDuplexStream<unknown, unknown>;
  const handlers: Record<string, (call: AnyCall, callback?: sendUnaryData<unknown>) => void> = {};
  for (const method of service.methods as DescMethod[]) {
    const handler = implementation[method.localName as keyof S] as AnyHandler | undefined;
    if (typeof handler !== "function") throw new Error(`${service.typeName}.${method.name} is not implemented`);
    const streaming = method.methodKind === "bidi_streaming";
    handlers[method.name] = (call, callback) => {
      const started = performance.now();
      const abort = new AbortController();
      // grpc-js also emits "cancelled" when a finished call's stream closes: only an unanswered call is cancelled.
      let answered = false;
      call.on("cancelled", () => {
        if (!answered) abort.abort(new RpcError(status.CANCELLED, "call cancelled"));
      });
      const context: CallContext = {
        method: method.name,
        ...requestIdsOf(call.metadata),
        signal: abort.signal,
      };
      const finish = (code: status, error?: unknown) =>
        options.onCallEnd?.(context, { code, error, durationMs: performance.now() - started });
      const answer = (code: status, message: string, response?: unknown) => {
        answered = true;
        if (!streaming) {
          callback?.(code === status.OK ? null : { code, details: message }, response);
        } else if (code === status.OK) {
          (call as ServerDuplexStream<unknown, unknown>).end();
        } else {
          // How grpc-js ends a stream with a status: its own "error" listener sends it.
          call.emit("error", { code, details: message });
        }
      };
      handler(streaming ? call : (call as ServerUnaryCall<unknown, unknown>).request, context).then(
        (init) => {
          answer(
            status.OK,
            "",
            streaming ? undefined : create(method.output, init as MessageInitShape<typeof method.output>),
          );
          finish(status.OK);
        },
        (error: unknown) => {
          const rpcError =
            error instanceof RpcError ? error : new RpcError(status.INTERNAL, "internal error in host agent");
          answer(rpcError.code, rpcError.message);
          finish(rpcError.code, error);
        },
      );
    };
  }
  server.addService(serviceDefinition(service), handlers);
}
