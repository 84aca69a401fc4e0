import type { ServiceDefinition } from "@grpc/grpc-js";

const raw = (buffer: Buffer) => buffer;

/**
 * One raw-buffer bidirectional stream per DevTools connection, as HostAgent.Cdp but without protobuf:
 * the caller's first message is the browser's DevTools URL, the agent's first message is empty
 * (connected), every further message is one CDP message as it is.
 */
export const FLOOR_CDP_SERVICE: ServiceDefinition = {
  cdp: {
    path: "/floor.FloorCdp/Cdp",
    requestStream: true,
    responseStream: true,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: raw,
    responseDeserialize: raw,
  },
};

/** As MAX_GRPC_MESSAGE_BYTES of the contract: a screenshot is megabytes. */
export const FLOOR_MAX_MESSAGE_BYTES = 256 * 1024 * 1024 + 1024;
