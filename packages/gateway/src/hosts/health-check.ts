import { RpcError } from "@browser-infra/contract";
import { type Client, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";

interface UnaryMethod<Request, Response> {
  path: string;
  requestSerialize(value: Request): Buffer;
  responseDeserialize(bytes: Buffer): Response;
}

// The standard grpc.health.v1 service, which every host agent serves beside its own.
const CHECK = healthService.Check as unknown as UnaryMethod<{ service: string }, { status: string }>;

/** The service name the agent reports on; its status turns NOT_SERVING while the agent shuts down. */
const HOST_AGENT_SERVICE = "hostagent.v1.HostAgent";

/** Asks the agent's health service whether it serves the host agent API; rejects with RpcError when unreachable. */
export function checkServing(channel: Client, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    channel.makeUnaryRequest(
      CHECK.path,
      CHECK.requestSerialize,
      CHECK.responseDeserialize,
      { service: HOST_AGENT_SERVICE },
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (error: ServiceError | null, response?: { status: string }) => {
        if (error) reject(new RpcError(error.code ?? status.UNKNOWN, error.details || error.message, { cause: error }));
        else resolve(response?.status === "SERVING");
      },
    );
  });
}
