import type { DescMethod, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import { type Metadata, type Server, type ServerUnaryCall, type sendUnaryData, status } from "@grpc/grpc-js";
import { REQUEST_ID_KEY } from "./metadata.ts";
import { RpcError } from "./rpc-error.ts";
import { serviceDefinition } from "./service-definition.ts";

/** What a handler knows about the call besides its request message. */
export interface CallContext {
  readonly method: string;
  /** The caller's request id, when it sent one. */
  readonly requestId: string | undefined;
  /** Aborted when the caller cancels or its deadline passes. */
  readonly signal: AbortSignal;
}

export type ServiceImplementation<S extends GenServiceMethods> = {
  [K in keyof S]: (
    request: MessageShape<S[K]["input"]>,
    context: CallContext,
  ) => Promise<MessageInitShape<S[K]["output"]>>;
};

export interface RegisterOptions {
  /** Told about every finished call, for logs and metrics. */
  onCallEnd?: (context: CallContext, outcome: { code: status; error?: unknown; durationMs: number }) => void;
}

function requestIdOf(metadata: Metadata): string | undefined {
  const value = metadata.get(REQUEST_ID_KEY)[0];
  return typeof value === "string" && value.length > 0 ? value : undefined;
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
  const handlers: Record<string, (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void> =
    {};
  for (const method of service.methods as DescMethod[]) {
    const handler = implementation[method.localName as keyof S];
    if (typeof handler !== "function") throw new Error(`${service.typeName}.${method.name} is not implemented`);
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
        requestId: requestIdOf(call.metadata),
        signal: abort.signal,
      };
      const finish = (code: status, error?: unknown) =>
        options.onCallEnd?.(context, { code, error, durationMs: performance.now() - started });
      handler(call.request as MessageShape<S[keyof S]["input"]>, context).then(
        (init) => {
          answered = true;
          callback(null, create(method.output, init as MessageInitShape<typeof method.output>));
          finish(status.OK);
        },
        (error: unknown) => {
          const rpcError =
            error instanceof RpcError ? error : new RpcError(status.INTERNAL, "internal error in host agent");
          answered = true;
          callback({ code: rpcError.code, details: rpcError.message });
          finish(rpcError.code, error);
        },
      );
    };
  }
  server.addService(serviceDefinition(service), handlers);
}
