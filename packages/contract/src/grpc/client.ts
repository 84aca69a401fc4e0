import type { DescMethod, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import { type Client, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { REQUEST_ID_KEY } from "./metadata.ts";
import { RpcError } from "./rpc-error.ts";
import { methodDefinition } from "./service-definition.ts";

export interface CallOptions {
  /** The call fails with DEADLINE_EXCEEDED after this many milliseconds. */
  timeoutMs: number;
  /** Travels as metadata to the server's logs. */
  requestId?: string;
  signal?: AbortSignal;
}

/** The service's unary methods; the adapter does not carry streams. */
export type PromiseClient<S extends GenServiceMethods> = {
  [K in keyof S as S[K]["methodKind"] extends "unary" ? K : never]: (
    request: MessageInitShape<S[K]["input"]>,
    options: CallOptions,
  ) => Promise<MessageShape<S[K]["output"]>>;
};

function toRpcError(error: ServiceError): RpcError {
  return new RpcError(error.code ?? status.UNKNOWN, error.details || error.message, { cause: error });
}

/**
 * A typed promise client for a protobuf-es service's unary methods over one
 * grpc-js channel. Every call carries a deadline; failures reject with RpcError.
 */
export function createPromiseClient<S extends GenServiceMethods>(
  service: GenService<S>,
  channel: Client,
): PromiseClient<S> {
  const client: Record<string, unknown> = {};
  for (const method of service.methods as DescMethod[]) {
    if (method.methodKind !== "unary") continue;
    const definition = methodDefinition(method);
    client[method.localName] = (request: MessageInitShape<typeof method.input>, options: CallOptions) =>
      new Promise((resolve, reject) => {
        const metadata = new Metadata();
        if (options.requestId) metadata.set(REQUEST_ID_KEY, options.requestId);
        const call = channel.makeUnaryRequest(
          definition.path,
          definition.requestSerialize,
          definition.responseDeserialize,
          create(method.input, request),
          metadata,
          { deadline: Date.now() + options.timeoutMs },
          (error, response) => {
            options.signal?.removeEventListener("abort", cancel);
            if (error) reject(toRpcError(error));
            else resolve(response);
          },
        );
        const cancel = () => call.cancel();
        options.signal?.addEventListener("abort", cancel, { once: true });
      });
  }
  return client as PromiseClient<S>;
}
