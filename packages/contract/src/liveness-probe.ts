/**
 * The liveness probe: one UDP datagram from the gateway that checks a host to the agent's port
 * number (UDP), and one back. It tells the gateway, every second and for a few bytes, that the
 * agent lives, whether it serves, and whether what Describe would say changed, so that a gateway
 * checking a thousand hosts holds no connection to an idle one (a gRPC channel costs about 80 KB
 * of memory; see the README's fleet notes). Everything else stays on gRPC.
 *
 *   probe  (gateway → agent): "BIP1" · nonce (8 bytes)                                    12 bytes
 *   answer (agent → gateway): "BIP1" · nonce (8 bytes) · status (1 byte) · version (4 bytes) 17 bytes
 *
 * The nonce is the gateway's, random per probe, and comes back as it was sent: an answer nobody
 * asked for is dropped, so an off-path sender cannot keep a dead host in the pool. The answer is
 * barely larger than the probe, so the agent is no amplifier. The version is stateVersion() of
 * the agent's run and its session: it changes exactly when Describe's sessionId or agentInstance
 * does.
 */

const MAGIC = Buffer.from("BIP1", "latin1");
export const PROBE_BYTES = 12;
export const ANSWER_BYTES = 17;

export type ProbeStatus = "serving" | "not_serving";

export interface ProbeAnswer {
  nonce: Buffer;
  status: ProbeStatus;
  version: number;
}

export function encodeProbe(nonce: Buffer): Buffer {
  if (nonce.length !== 8) throw new Error("a probe's nonce is 8 bytes");
  return Buffer.concat([MAGIC, nonce]);
}

/** The probe's nonce; undefined when the datagram is no probe. */
export function decodeProbe(datagram: Buffer): Buffer | undefined {
  if (datagram.length !== PROBE_BYTES || !datagram.subarray(0, 4).equals(MAGIC)) return undefined;
  return datagram.subarray(4, 12);
}

export function encodeAnswer(answer: ProbeAnswer): Buffer {
  const bytes = Buffer.alloc(ANSWER_BYTES);
  MAGIC.copy(bytes, 0);
  answer.nonce.copy(bytes, 4);
  bytes[12] = answer.status === "serving" ? 1 : 2;
  bytes.writeUInt32BE(answer.version >>> 0, 13);
  return bytes;
}

/** The answer; undefined when the datagram is no answer. */
export function decodeAnswer(datagram: Buffer): ProbeAnswer | undefined {
  if (datagram.length !== ANSWER_BYTES || !datagram.subarray(0, 4).equals(MAGIC)) return undefined;
  const status = datagram[12] === 1 ? "serving" : datagram[12] === 2 ? "not_serving" : undefined;
  if (!status) return undefined;
  return { nonce: datagram.subarray(4, 12), status, version: datagram.readUInt32BE(13) };
}

/** FNV-1a, 32 bits: cheap, and spread well enough for versions and for dealing hosts out. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The hash of the agent's run and its session ("" when idle): what a probe's version carries. */
export function stateVersion(agentInstance: string, sessionId: string): number {
  return fnv1a(`${agentInstance}|${sessionId}`);
}
