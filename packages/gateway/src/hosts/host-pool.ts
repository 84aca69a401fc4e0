import { createPromiseClient, HostAgent, MAX_GRPC_MESSAGE_BYTES, type PromiseClient } from "@browser-infra/contract";
import { type ChannelCredentials, type ChannelOptions, Client, credentials } from "@grpc/grpc-js";
import { withCallMetrics } from "../metrics/host-call-metrics.ts";
import { checkServing } from "./health-check.ts";
import { type HealthUpdate, HealthWatch } from "./health-watch.ts";

export type HostAgentClient = PromiseClient<(typeof HostAgent)["method"]>;

interface Channel {
  channel: Client;
  client: HostAgentClient | undefined;
  /** When a caller other than the host checks last took it (-Infinity: never). */
  usedAt: number;
}

export interface HostTls {
  ca: Buffer;
  cert: Buffer | undefined;
  key: Buffer | undefined;
  /** Checked against every agent's certificate instead of the host part of the address dialled. */
  serverName?: string | undefined;
}

/**
 * One long-lived gRPC channel per host agent address, created on first use.
 * Channels reconnect by themselves, so a host that comes back needs nothing.
 */
export class HostPool {
  readonly #channels = new Map<string, Channel>();
  readonly #watches = new Map<string, HealthWatch>();
  readonly #credentials: ChannelCredentials;
  readonly #tlsOptions: ChannelOptions;

  constructor(tls: HostTls | undefined) {
    this.#credentials = tls
      ? credentials.createSsl(tls.ca, tls.key ?? null, tls.cert ?? null)
      : credentials.createInsecure();
    // Without it grpc-js checks each certificate against the host part of the address dialled; the
    // override serves agents dialled by IP (or through a proxy) whose certificates carry another name.
    this.#tlsOptions = tls?.serverName ? { "grpc.ssl_target_name_override": tls.serverName } : {};
  }

  /** `byCheck`: a host check's use, which does not keep the channel open (see release()). */
  #entry(address: string, byCheck = false): Channel {
    let entry = this.#channels.get(address);
    if (entry && !byCheck) entry.usedAt = performance.now();
    if (!entry) {
      const channel = new Client(address, this.#credentials, {
        // Channelz keeps a trace of every channel's events for a debugging service this gateway
        // does not serve: a few KB per host for nothing (fleet scale, bench B10).
        "grpc.enable_channelz": 0,
        // Fail fast when a host is down instead of waiting out long reconnect backoffs.
        "grpc.initial_reconnect_backoff_ms": 200,
        "grpc.max_reconnect_backoff_ms": 2_000,
        "grpc.keepalive_time_ms": 30_000,
        "grpc.keepalive_timeout_ms": 5_000,
        // CDP messages can be far larger than gRPC's default limit of 4 MiB.
        "grpc.max_receive_message_length": MAX_GRPC_MESSAGE_BYTES,
        ...this.#tlsOptions,
      });
      entry = { channel, client: undefined, usedAt: byCheck ? Number.NEGATIVE_INFINITY : performance.now() };
      this.#channels.set(address, entry);
    }
    return entry;
  }

  /** The host's client; `options.byCheck`: for a host check, whose use does not keep the channel open. */
  client(address: string, options: { byCheck?: boolean } = {}): HostAgentClient {
    const entry = this.#entry(address, options.byCheck);
    // Made on first use: most hosts a gateway checks are only ever asked for their health.
    entry.client ??= withCallMetrics(createPromiseClient(HostAgent, entry.channel));
    return entry.client;
  }

  /**
   * Keeps a health stream open to the host (unless one is): `onUpdate` hears when the agent stops or
   * starts serving, and once when the stream is lost (the agent or its host died). `known` is the
   * status a check just found.
   */
  watchHealth(address: string, known: "serving" | "not_serving", onUpdate: (update: HealthUpdate) => void): void {
    const current = this.#watches.get(address);
    if (current && !current.over) return;
    const watch = new HealthWatch(this.#entry(address, true).channel, known, (update) => {
      if (update === "lost" && this.#watches.get(address) === watch) this.#watches.delete(address);
      onUpdate(update);
    });
    this.#watches.set(address, watch);
  }

  /** What the host's health stream last said; undefined when none is open. */
  pushedHealth(address: string): "serving" | "not_serving" | undefined {
    return this.#watches.get(address)?.status;
  }

  /**
   * Closes the channel to a host nothing but host checks has used for `idleMs`: a gateway that
   * knows a thousand hosts keeps connections only to those it talks to (and those whose health
   * stream it watches). The caller knows the host runs no session (whose calls may be long
   * streams). A call started less than idleMs ago is not cut; the channel opens again on next use.
   * True when it was closed.
   */
  release(address: string, idleMs: number): boolean {
    const entry = this.#channels.get(address);
    if (!entry || performance.now() - entry.usedAt < idleMs) return false;
    this.#channels.delete(address);
    this.#watches.get(address)?.cancel();
    this.#watches.delete(address);
    entry.channel.close();
    return true;
  }

  /** How many channels are open now: one per host this gateway talks to, or watches the health stream of. */
  get openChannels(): number {
    return this.#channels.size;
  }

  /** Whether the agent's gRPC health service says it serves; rejects with RpcError when it cannot be asked. */
  serving(address: string, timeoutMs: number): Promise<boolean> {
    return checkServing(this.#entry(address, true).channel, timeoutMs);
  }

  close(): void {
    for (const watch of this.#watches.values()) watch.cancel();
    this.#watches.clear();
    for (const { channel } of this.#channels.values()) channel.close();
    this.#channels.clear();
  }
}
