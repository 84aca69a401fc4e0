import type { DescMessage, DescMethod, DescService, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

/** The wire path grpc-js routes by: /package.Service/Method. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * Takes a message or its init shape (create() returns a message of the schema as it is). The
 * Buffer is a view of toBinary's bytes, not a copy: CDP messages can be megabytes.
 */
function serializer<T extends DescMessage>(schema: T): (message: MessageInitShape<T>) => Buffer {
  return (message) => {
    const bytes = toBinary(schema, create(schema, message));
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

function deserializer<T extends DescMessage>(schema: T): (bytes: Buffer) => MessageShape<T> {
  return (bytes) => fromBinary(schema, bytes);
}

/** Unary and bidirectional streaming methods; the contract has no one-way streams. */
export function methodDefinition(method: DescMethod): MethodDefinition<unknown, unknown> {
  if (method.methodKind !== "unary" && method.methodKind !== "bidi_streaming") {
    throw new Error(`${methodPath(method)}: only unary and bidirectional streaming methods are supported`);
  }
  const streaming = method.methodKind === "bidi_streaming";
  return {
    path: methodPath(method),
    requestStream: streaming,
    responseStream: streaming,
    requestSerialize: serializer(method.input) as (value: unknown) => Buffer,
    requestDeserialize: deserializer(method.input),
    responseSerialize: serializer(method.output) as (value: unknown) => Buffer,
    responseDeserialize: deserializer(method.output),
    originalName: method.localName,
  };
}

/** Derives the grpc-js ServiceDefinition from a protobuf-es service descriptor. */
export function serviceDefinition(service: DescService): ServiceDefinition {
  return Object.fromEntries(service.methods.map((method) => [method.name, methodDefinition(method)]));
}
