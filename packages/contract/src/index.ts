export {
  type AddressDecision,
  type Lookup,
  type Network,
  ProxyAddressPolicy,
  parseNetwork,
} from "./address-policy.ts";
export { MAX_CDP_MESSAGE_BYTES, MAX_GRPC_MESSAGE_BYTES } from "./cdp.ts";
export { CDP_HIGH_WATER_BYTES, type CdpMessageStream, CdpPump, type CdpSocket } from "./cdp-pump.ts";
export * from "./gen/grpc/health/v1/health_pb.js";
export * from "./gen/hostagent/v1/host_agent_pb.js";
export {
  type CallOptions,
  type ClientBidiStream,
  createPromiseClient,
  type PromiseClient,
  type StreamOptions,
  toRpcError,
} from "./grpc/client.ts";
export { keptRequestId, REQUEST_ID_KEY, refusedRequestId } from "./grpc/metadata.ts";
export { Code, RpcError } from "./grpc/rpc-error.ts";
export {
  type CallContext,
  type RegisterOptions,
  registerService,
  type ServerBidiStream,
  type ServiceImplementation,
} from "./grpc/server.ts";
export { serviceDefinition } from "./grpc/service-definition.ts";
export {
  ANSWER_BYTES,
  decodeAnswer,
  decodeProbe,
  encodeAnswer,
  encodeProbe,
  fnv1a,
  PROBE_BYTES,
  type ProbeAnswer,
  type ProbeStatus,
  stateVersion,
} from "./liveness-probe.ts";
