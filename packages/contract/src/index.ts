export * from "./gen/grpc/health/v1/health_pb.js";
export * from "./gen/hostagent/v1/host_agent_pb.js";
export { type CallOptions, createPromiseClient, type PromiseClient } from "./grpc/client.ts";
export { REQUEST_ID_KEY } from "./grpc/metadata.ts";
export { Code, RpcError } from "./grpc/rpc-error.ts";
export { type CallContext, type RegisterOptions, registerService, type ServiceImplementation } from "./grpc/server.ts";
export { serviceDefinition } from "./grpc/service-definition.ts";
