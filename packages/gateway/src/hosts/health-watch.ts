import {
  HealthCheckRequestSchema,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "@browser-infra/contract";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Client, ClientReadableStream } from "@grpc/grpc-js";
import { HOST_AGENT_SERVICE } from "./health-check.ts";

const WATCH_PATH = "/grpc.health.v1.Health/Watch";

/** What an agent's health stream says: it serves, it does not, or the stream is gone (the agent died, or the host). */
export type HealthUpdate = "serving" | "not_serving" | "lost";

const serialize = (request: { service: string }) =>
  Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, request)));
const deserialize = (bytes: Buffer) => fromBinary(HealthCheckResponseSchema, bytes);

/**
 * One agent's standard grpc.health.v1 Watch stream: the agent pushes its status when it changes,
 * so the gateway that checks the host learns at once that the agent stopped serving or died (the
 * stream ends), and an idle stream costs nothing but the channel's keepalive pings.
 */
export class HealthWatch {
  readonly #call: ClientReadableStream<HealthCheckResponse>;
  #status: "serving" | "not_serving" | undefined;
  #over = false;

  /** `known`: the status a check just found, so that the stream's first message (the same) is no news. */
  constructor(channel: Client, known: "serving" | "not_serving", onUpdate: (update: HealthUpdate) => void) {
    this.#status = known;
    this.#call = channel.makeServerStreamRequest(WATCH_PATH, serialize, deserialize, { service: HOST_AGENT_SERVICE });
    this.#call.on("data", (response: HealthCheckResponse) => {
      const status = response.status === HealthCheckResponse_ServingStatus.SERVING ? "serving" : "not_serving";
      if (status === this.#status) return;
      this.#status = status;
      onUpdate(status);
    });
    const end = () => {
      if (this.#over) return;
      this.#over = true;
      this.#status = undefined;
      onUpdate("lost");
    };
    this.#call.on("error", end);
    this.#call.on("end", end);
  }

  /** The last status the agent pushed; undefined before the first, and once the stream ended. */
  get status(): "serving" | "not_serving" | undefined {
    return this.#status;
  }

  get over(): boolean {
    return this.#over;
  }

  /** Ends the stream without telling anyone: this side closed it. */
  cancel(): void {
    this.#over = true;
    this.#call.cancel();
  }
}
