import { createPromiseClient, HostAgent, type PromiseClient } from "@browser-infra/contract";
import { type ChannelCredentials, Client, credentials } from "@grpc/grpc-js";

export type HostAgentClient = PromiseClient<(typeof HostAgent)["method"]>;

export interface HostTls {
  ca: Buffer;
  cert: Buffer | undefined;
  key: Buffer | undefined;
}

/**
 * One long-lived gRPC channel per host agent address, created on first use.
 * Channels reconnect by themselves, so a host that comes back needs nothing.
 */
export class HostPool {
  readonly #channels = new Map<string, { channel: Client; client: HostAgentClient }>();
  readonly #credentials: ChannelCredentials;

  constructor(tls: HostTls | undefined) {
    this.#credentials = tls
      ? credentials.createSsl(tls.ca, tls.key ?? null, tls.cert ?? null)
      : credentials.createInsecure();
  }

  client(address: string): HostAgentClient {
    let entry = this.#channels.get(address);
    if (!entry) {
      const channel = new Client(address, this.#credentials, {
        // Fail fast when a host is down instead of waiting out long reconnect backoffs.
        "grpc.initial_reconnect_backoff_ms": 200,
        "grpc.max_reconnect_backoff_ms": 2_000,
        "grpc.keepalive_time_ms": 30_000,
        "grpc.keepalive_timeout_ms": 5_000,
      });
      entry = { channel, client: createPromiseClient(HostAgent, channel) };
      this.#channels.set(address, entry);
    }
    return entry.client;
  }

  close(): void {
    for (const { channel } of this.#channels.values()) channel.close();
    this.#channels.clear();
  }
}
