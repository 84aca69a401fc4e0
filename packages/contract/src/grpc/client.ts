import type { DescMethod, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import { type Client, type ClientDuplexStream, Metadata, type ServiceError, status } from "@grpc/grpc-js";
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

/** A stream lives as long as its peers keep it: no deadline, ended by either side or by cancel(). */
export interface StreamOptions {
  requestId?: string;
}

/**
 * The caller's side of a bidirectional stream: grpc-js's duplex of messages. It emits "error"
 * with a ServiceError (see toRpcError) when the call ends with any status but OK; a listener
 * must be attached.
 */
export type ClientBidiStream<In, Out> = ClientDuplexStream<In, Out>;

/** The service's unary methods as promises and its bidirectional streams as duplex streams. */
export type PromiseClient<S extends GenServiceMethods> = {
  [K in keyof S as S[K]["methodKind"] extends "unary" | "bidi_streaming"
    ? K
    : never]: S[K]["methodKind"] extends "unary"
    ? (request: MessageInitShape<S[K]["input"]>, options: CallOptions) => Promise<MessageShape<S[K]["output"]>>
    : (options: StreamOptions) => ClientBidiStream<MessageInitShape<S[K]["input"]>, MessageShape<S[K]["output"]>>;
};

/** A failed call's status as the one error type of the contract. */
export function toRpcError(error: ServiceError): RpcError {
  return new RpcError(error.code ?? status.UNKNOWN, error.details || error.message, { cause: error });
}

function metadataOf(requestId: string | undefined): Metadata {
  const metadata = new Metadata();
  if (requestId) metadata.set(REQUEST_ID_KEY, requestId);
  return metadata;
}

/**
 * A typed client for a protobuf-es service over one grpc-js channel. Every unary call carries a
 * deadline and rejects with RpcError; a bidirectional method opens a stream.
 */
export function createPromiseClient<S extends GenServiceMethods>(
  service: GenService<S>,
  channel: Client,
): PromiseClient<S> {
  const client: Record<string, unknown> = {};
  for (const method of service.methods as DescMethod[]) {
    if (method.methodKind === "bidi_streaming") {
      const definition = methodDefinition(method);
      client[method.localName] = (options: StreamOptions) =>
        channel.makeBidiStreamRequest(
          definition.path,
          definition.requestSerialize,
          definition.responseDeserialize,
          metadataOf(options.requestId),
          {},
        );
      continue;
    }
    if (method.methodKind !== "unary") continue;
    const definition = methodDefinition(method);
    client[method.localName] = (request: MessageInitShape<typeof method.input>, options: CallOptions) =>
      new Promise((resolve, reject) => {
        const call = channel.makeUnaryRequest(
          definition.path,
          definition.requestSerialize,
          definition.responseDeserialize,
          create(method.input, request),
          metadataOf(options.requestId),
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
