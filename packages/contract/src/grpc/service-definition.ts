import type { DescMessage, DescMethod, DescService, MessageShape } from "@bufbuild/protobuf";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

/** The wire path grpc-js routes by: /package.Service/Method. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

function serializer<T extends DescMessage>(schema: T): (message: MessageShape<T>) => Buffer {
  return (message) => Buffer.from(toBinary(schema, message));
}

function deserializer<T extends DescMessage>(schema: T): (bytes: Buffer) => MessageShape<T> {
  return (bytes) => fromBinary(schema, bytes);
}

export function methodDefinition(method: DescMethod): MethodDefinition<unknown, unknown> {
  if (method.methodKind !== "unary") {
    throw new Error(`${methodPath(method)}: only unary methods are supported`);
  }
  return {
    path: methodPath(method),
    requestStream: false,
    responseStream: false,
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
