import { createPromiseClient, Health, HealthCheckResponse_ServingStatus } from "@browser-infra/contract";
import type { Client } from "@grpc/grpc-js";

/** The service name the agent reports on; its status turns NOT_SERVING while the agent shuts down. */
export const HOST_AGENT_SERVICE = "hostagent.v1.HostAgent";

/**
 * Asks the agent's standard grpc.health.v1 service whether it serves the host agent API; rejects
 * with RpcError when unreachable.
 */
export async function checkServing(channel: Client, timeoutMs: number): Promise<boolean> {
  const { status } = await createPromiseClient(Health, channel).check({ service: HOST_AGENT_SERVICE }, { timeoutMs });
  return status === HealthCheckResponse_ServingStatus.SERVING;
}
