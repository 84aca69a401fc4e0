import { randomBytes } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { isIPv6 } from "node:net";
import { decodeAnswer, encodeProbe, type ProbeStatus } from "@browser-infra/contract";

/** What the last check found: a probe's answer that says otherwise is news. */
export interface ProbeExpectation {
  status: ProbeStatus;
  /** stateVersion() of the last Describe; undefined: not compared (a host that does not serve was not described). */
  version: number | undefined;
}

/** The host's answer differs from what its last check found, or it stopped answering. */
export type ProbeNews = "changed" | "lost";

interface Tracked {
  host: string;
  port: number;
  expected: ProbeExpectation;
  onNews: (news: ProbeNews) => void;
  since: number;
  /** When it is probed next: each host at its own moment of the interval, never all at once. */
  probeAt: number;
  answeredAt: number | undefined;
  answer: ProbeStatus | undefined;
  /** News was told: not again until the next check calls track(). */
  told: boolean;
  nonces: [string | undefined, string | undefined];
}

export interface LivenessProbeOptions {
  /** How often each tracked host is probed (spread over the interval, TICKS_PER_INTERVAL times). */
  intervalMs: number;
  /** A host that answered before and has not for this long is lost; one that never answered, silent. */
  lostAfterMs: number;
}

/**
 * A probe every 1.5 s, and a host lost after 3.2 s without an answer: two probes may be lost in a
 * row without a false alarm, and a dead host is found within 3.3 s (silence is looked for at every
 * tick, not only when the host's next probe is due). The sends are most of the probes' CPU (a
 * gateway probing 1,000 hosts a second spent 5 % of a core), so the interval is the longest that
 * keeps a dead host well within the 5 s the pool allows.
 */
export const DEFAULT_PROBE_OPTIONS: LivenessProbeOptions = { intervalMs: 1_500, lostAfterMs: 3_200 };

/** How long a host that never answered is left to its health stream before it is probed again. */
const SILENT_RETRY_MS = 300_000;
/**
 * How often the probes due are sent. Spread over the interval rather than sent at once, a
 * thousand answers never arrive together: a burst overflows the socket's receive buffer, and the
 * answers dropped looked like lost hosts.
 */
const TICKS_PER_INTERVAL = 20;
const RECEIVE_BUFFER_BYTES = 1024 * 1024;

function hostAndPort(address: string): { host: string; port: number } | undefined {
  if (address.startsWith("unix:")) return undefined;
  const colon = address.lastIndexOf(":");
  const port = Number(address.slice(colon + 1));
  if (colon < 1 || !Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port };
}

/**
 * Probes the hosts this gateway checks over UDP (packages/contract/src/liveness-probe.ts), one
 * datagram every intervalMs each, from one socket: the gateway learns within lostAfterMs that an agent
 * died or hung, and at once that it stopped serving or that its session changed, while holding no
 * connection to an idle host. A host that never answers (its agent listens on a Unix socket, is
 * older, or a firewall drops UDP) is reported silent; the caller watches its health stream instead.
 */
export class LivenessProbes {
  readonly #options: LivenessProbeOptions;
  readonly #tracked = new Map<string, Tracked>();
  /** Nonce (hex) → address, for the last two probes of each host. */
  readonly #byNonce = new Map<string, string>();
  readonly #silentAt = new Map<string, number>();
  #udp4: Socket | undefined;
  #udp6: Socket | undefined;
  readonly #timer: NodeJS.Timeout;

  constructor(options: LivenessProbeOptions = DEFAULT_PROBE_OPTIONS) {
    this.#options = options;
    this.#timer = setInterval(() => this.#tick(), options.intervalMs / TICKS_PER_INTERVAL);
    this.#timer.unref();
  }

  /**
   * Whether the host can be probed: not a Unix socket, and not found silent lately. A host never
   * probed is given the benefit of the doubt; track() reports it silent if it never answers.
   */
  usable(address: string): boolean {
    if (!hostAndPort(address)) return false;
    const silentAt = this.#silentAt.get(address);
    return silentAt === undefined || performance.now() - silentAt > SILENT_RETRY_MS;
  }

  /**
   * Probes the host from now on (or goes on), against what its check just found; onNews hears,
   * once until the next track(), that an answer differs or that the host stopped answering. A host
   * that never answers is marked silent and untracked, with onNews("lost").
   */
  track(address: string, expected: ProbeExpectation, onNews: (news: ProbeNews) => void): void {
    const target = hostAndPort(address);
    if (!target) return;
    const current = this.#tracked.get(address);
    if (current) {
      current.expected = expected;
      current.onNews = onNews;
      current.told = false;
      // Checked again after it was lost (a restarted agent): it has lostAfterMs to answer anew.
      if (current.answeredAt !== undefined && performance.now() - current.answeredAt > this.#options.lostAfterMs) {
        current.answeredAt = undefined;
        current.since = performance.now();
      }
      return;
    }
    const now = performance.now();
    const tracked: Tracked = {
      ...target,
      expected,
      onNews,
      since: now,
      probeAt: now + Math.random() * this.#options.intervalMs,
      answeredAt: undefined,
      answer: undefined,
      told: false,
      nonces: [undefined, undefined],
    };
    this.#tracked.set(address, tracked);
    this.#probe(address, tracked, randomBytes(8));
  }

  /**
   * What the host answered to a probe within lostAfterMs, if it matches what its last check found
   * (so the check can be skipped); undefined otherwise.
   */
  confirmed(address: string): ProbeStatus | undefined {
    const tracked = this.#tracked.get(address);
    if (!tracked?.answeredAt || tracked.told) return undefined;
    if (performance.now() - tracked.answeredAt > this.#options.lostAfterMs) return undefined;
    return tracked.answer === tracked.expected.status ? tracked.answer : undefined;
  }

  untrack(address: string): void {
    const tracked = this.#tracked.get(address);
    if (!tracked) return;
    for (const nonce of tracked.nonces) if (nonce) this.#byNonce.delete(nonce);
    this.#tracked.delete(address);
  }

  /** Stops probing every host not in `addresses` (another gateway checks it, or it left the store). */
  retain(addresses: ReadonlySet<string>): void {
    for (const address of this.#tracked.keys()) if (!addresses.has(address)) this.untrack(address);
  }

  close(): void {
    clearInterval(this.#timer);
    this.#tracked.clear();
    this.#byNonce.clear();
    this.#udp4?.close();
    this.#udp6?.close();
    this.#udp4 = this.#udp6 = undefined;
  }

  #tick(): void {
    const now = performance.now();
    const due: Array<[string, Tracked]> = [];
    for (const [address, tracked] of this.#tracked) {
      const heardAt = tracked.answeredAt ?? tracked.since;
      if (now - heardAt > this.#options.lostAfterMs) {
        if (tracked.answeredAt === undefined) {
          this.#silentAt.set(address, now);
          this.untrack(address);
          tracked.onNews("lost");
          continue;
        }
        this.#tell(tracked, "lost");
      }
      if (tracked.probeAt <= now) due.push([address, tracked]);
    }
    const nonces = randomBytes(8 * due.length);
    due.forEach(([address, tracked], i) => {
      tracked.probeAt += this.#options.intervalMs;
      if (tracked.probeAt <= now) tracked.probeAt = now + this.#options.intervalMs;
      this.#probe(address, tracked, nonces.subarray(8 * i, 8 * (i + 1)));
    });
  }

  #probe(address: string, tracked: Tracked, nonce: Buffer): void {
    const key = nonce.toString("hex");
    const [, older] = tracked.nonces;
    if (older) this.#byNonce.delete(older);
    tracked.nonces = [key, tracked.nonces[0]];
    this.#byNonce.set(key, address);
    // A datagram that cannot be sent is a probe unanswered: lostAfterMs decides.
    this.#socket(tracked.host).send(encodeProbe(nonce), tracked.port, tracked.host, () => undefined);
  }

  #socket(host: string): Socket {
    if (isIPv6(host)) {
      this.#udp6 ??= this.#open("udp6");
      return this.#udp6;
    }
    this.#udp4 ??= this.#open("udp4");
    return this.#udp4;
  }

  #open(type: "udp4" | "udp6"): Socket {
    const socket = createSocket({ type, recvBufferSize: RECEIVE_BUFFER_BYTES });
    socket.on("message", (datagram) => this.#onAnswer(datagram));
    // An ICMP error for one host's datagram, say: that host stays unanswered.
    socket.on("error", () => undefined);
    socket.unref();
    return socket;
  }

  #onAnswer(datagram: Buffer): void {
    const answer = decodeAnswer(datagram);
    if (!answer) return;
    const address = this.#byNonce.get(answer.nonce.toString("hex"));
    const tracked = address === undefined ? undefined : this.#tracked.get(address);
    if (!tracked) return;
    tracked.answeredAt = performance.now();
    tracked.answer = answer.status;
    const { expected } = tracked;
    if (answer.status !== expected.status || (expected.version !== undefined && answer.version !== expected.version)) {
      this.#tell(tracked, "changed");
    }
  }

  #tell(tracked: Tracked, news: ProbeNews): void {
    if (tracked.told) return;
    tracked.told = true;
    tracked.onNews(news);
  }
}
