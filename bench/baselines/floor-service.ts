import type { ServiceDefinition } from "@grpc/grpc-js";

const raw = (buffer: Buffer) => buffer;

function unary(path: string) {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: raw,
    responseDeserialize: raw,
  } as const;
}

/** Raw-buffer methods: serialization costs nothing, so the floor measures transport alone. */
export const FLOOR_SERVICE: ServiceDefinition = {
  fileInfo: unary("/floor.Floor/FileInfo"),
  pressKey: unary("/floor.Floor/PressKey"),
};
