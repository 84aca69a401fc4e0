import { rm } from "node:fs/promises";
import { connect } from "node:net";
import { HostAgent, MAX_GRPC_MESSAGE_BYTES, registerService } from "@browser-infra/contract";
import { Server, ServerCredentials, status } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type { AgentConfig } from "../config.ts";
import { describeHost } from "../display/describe-host.ts";
import type { Keyboard } from "../keyboard/index.ts";
import type { Logger } from "../logger.ts";
import { countingKeyEvents } from "../metrics/key-events.ts";
import { recordRpcCall } from "../metrics/rpc-metrics.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { cdpHandler } from "./cdp-handler.ts";
import { fileInfoHandler } from "./file-info-handler.ts";
import { fsHandlers } from "./fs-handlers.ts";
import { inputHandlers } from "./mouse-handlers.ts";
import { pressKeyHandler } from "./press-key-handler.ts";
import { addReflection } from "./reflection.ts";
import { screenshotHandlers } from "./screenshot-handler.ts";
import { sessionHandlers } from "./session-handlers.ts";

/**
 * A socket file an agent left behind when it was killed: grpc-js removes its socket when it shuts
 * down, but not after a SIGKILL, and binding to an existing file fails. One that still answers
 * belongs to a running agent and is left alone.
 */
async function removeStaleSocket(path: string): Promise<void> {
  const answering = await new Promise<boolean>((resolve) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
  if (answering) throw new Error(`another process listens on ${path}`);
  await rm(path, { force: true });
}

/** The service name gateways ask the health service about. */
const HOST_AGENT_SERVICE = "hostagent.v1.HostAgent";

export interface AgentServer {
  /** The port actually bound (useful with port 0); undefined on a Unix socket. */
  readonly port: number | undefined;
  /** What the health service answers, for the server as a whole and for HostAgent (which gateways ask). */
  setServing(serving: boolean): void;
  /** What it answers now. */
  readonly serving: boolean;
  /** Stops accepting calls and waits for running ones up to graceMs. */
  shutdown(graceMs: number): Promise<void>;
}

function credentials(config: AgentConfig): ServerCredentials {
  if (!config.tls) return ServerCredentials.createInsecure();
  const { cert, key, clientCa } = config.tls;
  // With a client CA the agent demands a client certificate signed by it (mTLS).
  return ServerCredentials.createSsl(
    clientCa ?? null,
    [{ cert_chain: cert, private_key: key }],
    clientCa !== undefined,
  );
}

export async function startAgentServer(
  config: AgentConfig,
  deps: { keyboard: Keyboard | undefined; slot: BrowserSlot; logger: Logger },
): Promise<AgentServer> {
  const { logger, slot } = deps;
  // CDP messages can be far larger than gRPC's default limit of 4 MiB.
  const server = new Server({ "grpc.max_receive_message_length": MAX_GRPC_MESSAGE_BYTES });
  registerService(
    server,
    HostAgent,
    {
      ...sessionHandlers(slot),
      fileInfo: fileInfoHandler(slot),
      pressKey: countingKeyEvents(
        pressKeyHandler({ keyboard: deps.keyboard, slot, maxPressDurationMs: config.maxPressDurationMs }),
      ),
      describe: () => describeHost(config, slot, logger),
      cdp: cdpHandler(slot),
      ...screenshotHandlers({ slot, display: config.display }),
      ...inputHandlers({ keyboard: deps.keyboard, slot, maxDurationMs: config.maxPressDurationMs }),
      ...fsHandlers(slot),
    },
    {
      onCallEnd: (context, outcome) => {
        recordRpcCall(context.method, outcome.code, outcome.durationMs);
        const line = {
          reqId: context.requestId,
          callerReqId: context.callerRequestId,
          method: context.method,
          code: status[outcome.code],
          durationMs: Math.round(outcome.durationMs * 1000) / 1000,
        };
        if (outcome.code === status.INTERNAL) logger.error({ ...line, err: outcome.error }, "rpc failed");
        else logger.info(line, "rpc");
      },
    },
  );
  const health = new HealthImplementation({ "": "SERVING", [HOST_AGENT_SERVICE]: "SERVING" });
  let serving = true;
  const setServing = (now: boolean) => {
    serving = now;
    for (const service of ["", HOST_AGENT_SERVICE]) health.setStatus(service, now ? "SERVING" : "NOT_SERVING");
  };
  health.addToServer(server);
  addReflection(server);

  if (config.listen.startsWith("unix:")) await removeStaleSocket(config.listen.slice("unix:".length));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(config.listen, credentials(config), (error, boundPort) =>
      error ? reject(error) : resolve(boundPort),
    ),
  );
  return {
    port: config.listen.startsWith("unix:") ? undefined : port,
    setServing,
    get serving() {
      return serving;
    },
    shutdown: (graceMs) =>
      new Promise<void>((resolve) => {
        setServing(false);
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
