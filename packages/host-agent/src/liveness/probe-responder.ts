import { createSocket, type Socket } from "node:dgram";
import { decodeProbe, encodeAnswer, type ProbeStatus } from "@browser-infra/contract";

/** What an answer says: whether the agent serves, and the version of what Describe would say. */
export type ProbeState = () => { status: ProbeStatus; version: number };

export interface ProbeResponder {
  close(): Promise<void>;
}

/**
 * Answers the gateways' liveness probes (packages/contract/src/liveness-probe.ts) on UDP `port`
 * of `host`, the same address and port number the gRPC server listens on (TCP), so that nothing
 * new is configured. Anything that is not a probe is dropped unanswered.
 */
export async function startProbeResponder(host: string, port: number, state: ProbeState): Promise<ProbeResponder> {
  const address = host.replace(/^\[(.*)\]$/, "$1");
  const socket: Socket = createSocket({ type: address.includes(":") ? "udp6" : "udp4" });
  socket.on("message", (datagram, from) => {
    const nonce = decodeProbe(datagram);
    if (!nonce) return;
    // A send that fails (the sender's address unreachable) loses one answer; the next probe asks again.
    socket.send(encodeAnswer({ nonce, ...state() }), from.port, from.address, () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, address, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  // Past binding, an error concerns one datagram: the socket goes on.
  socket.on("error", () => undefined);
  return { close: () => new Promise((resolve) => socket.close(() => resolve())) };
}
