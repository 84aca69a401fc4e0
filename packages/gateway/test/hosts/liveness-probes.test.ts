import { createSocket, type Socket } from "node:dgram";
import { setTimeout as sleep } from "node:timers/promises";
import { decodeProbe, encodeAnswer, type ProbeStatus } from "@browser-infra/contract";
import { afterEach, describe, expect, it } from "vitest";
import { LivenessProbes, type ProbeNews } from "../../src/hosts/liveness-probes.ts";

/** Short periods, so that a lost host shows within a test's second. */
const OPTIONS = { intervalMs: 100, lostAfterMs: 300 };

interface FakeAgent {
  address: string;
  state: { status: ProbeStatus; version: number };
  /** Answers with a nonce of its own instead of the probe's. */
  forgeNonce: boolean;
  probes: number;
  close(): Promise<void>;
}

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close();
});

/** A UDP socket that answers probes the way an agent does, from state it is told. */
async function fakeAgent(): Promise<FakeAgent> {
  const socket: Socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  let closed = false;
  const agent: FakeAgent = {
    address: `127.0.0.1:${socket.address().port}`,
    state: { status: "serving", version: 1 },
    forgeNonce: false,
    probes: 0,
    close: async () => {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => socket.close(resolve));
    },
  };
  socket.on("message", (datagram, from) => {
    const nonce = decodeProbe(datagram);
    if (!nonce) return;
    agent.probes++;
    const sent = agent.forgeNonce ? Buffer.alloc(8, 1) : nonce;
    socket.send(encodeAnswer({ nonce: sent, ...agent.state }), from.port, from.address);
  });
  open.push(agent);
  return agent;
}

function probes(): LivenessProbes {
  const created = new LivenessProbes(OPTIONS);
  open.push(created);
  return created;
}

function newsOf(): { news: ProbeNews[]; onNews: (news: ProbeNews) => void } {
  const news: ProbeNews[] = [];
  return { news, onNews: (item) => news.push(item) };
}

describe("liveness probes of the hosts a gateway checks", () => {
  it("confirm a host that answers as its check found, and tell nothing", async () => {
    const agent = await fakeAgent();
    const prober = probes();
    const { news, onNews } = newsOf();
    prober.track(agent.address, { status: "serving", version: 1 }, onNews);
    await sleep(400);
    expect(agent.probes).toBeGreaterThanOrEqual(3);
    expect(prober.confirmed(agent.address)).toBe("serving");
    expect(news).toEqual([]);
  });

  it("tell once that the agent's answer changed (its session, its run, or whether it serves), until checked again", async () => {
    const agent = await fakeAgent();
    const prober = probes();
    const { news, onNews } = newsOf();
    prober.track(agent.address, { status: "serving", version: 1 }, onNews);
    await sleep(150);
    agent.state = { status: "serving", version: 2 };
    await sleep(400);
    expect(news).toEqual(["changed"]);
    expect(prober.confirmed(agent.address)).toBeUndefined();
    // The check found the new state: it is expected from now on.
    prober.track(agent.address, { status: "serving", version: 2 }, onNews);
    await sleep(250);
    expect(prober.confirmed(agent.address)).toBe("serving");
    agent.state = { status: "not_serving", version: 2 };
    await sleep(250);
    expect(news).toEqual(["changed", "changed"]);
  });

  it("compare only whether it serves when the check described nothing", async () => {
    const agent = await fakeAgent();
    agent.state = { status: "not_serving", version: 99 };
    const prober = probes();
    const { news, onNews } = newsOf();
    prober.track(agent.address, { status: "not_serving", version: undefined }, onNews);
    await sleep(300);
    expect(news).toEqual([]);
    agent.state = { status: "serving", version: 99 };
    await sleep(300);
    expect(news).toEqual(["changed"]);
  });

  it("tell that a host that answered stopped answering (its agent died), within lostAfterMs and a tick", async () => {
    const agent = await fakeAgent();
    const prober = probes();
    const { news, onNews } = newsOf();
    prober.track(agent.address, { status: "serving", version: 1 }, onNews);
    await sleep(250);
    await agent.close();
    const closedAt = performance.now();
    while (news.length === 0 && performance.now() - closedAt < 2_000) await sleep(10);
    expect(news).toEqual(["lost"]);
    expect(performance.now() - closedAt).toBeLessThan(OPTIONS.lostAfterMs + 2 * OPTIONS.intervalMs + 100);
    // Still probable: a restarted agent is tracked again by its next check.
    expect(prober.usable(agent.address)).toBe(true);
  });

  it("mark a host that never answers silent, so that its health stream is watched instead", async () => {
    const agent = await fakeAgent();
    await agent.close();
    const prober = probes();
    const { news, onNews } = newsOf();
    expect(prober.usable(agent.address)).toBe(true);
    prober.track(agent.address, { status: "serving", version: 1 }, onNews);
    await sleep(600);
    expect(news).toEqual(["lost"]);
    expect(prober.usable(agent.address)).toBe(false);
  });

  it("drop answers that carry no nonce it sent, so nobody off the path keeps a dead host in the pool", async () => {
    const agent = await fakeAgent();
    agent.forgeNonce = true;
    const prober = probes();
    const { news, onNews } = newsOf();
    prober.track(agent.address, { status: "serving", version: 1 }, onNews);
    await sleep(600);
    expect(prober.confirmed(agent.address)).toBeUndefined();
    expect(news).toEqual(["lost"]);
  });

  it("never probe an agent on a Unix socket, nor hosts untracked or not retained", async () => {
    const prober = probes();
    expect(prober.usable("unix:/run/agent.sock")).toBe(false);
    const kept = await fakeAgent();
    const dropped = await fakeAgent();
    const gone = await fakeAgent();
    for (const agent of [kept, dropped, gone]) prober.track(agent.address, { status: "serving", version: 1 }, () => {});
    await sleep(150);
    prober.retain(new Set([kept.address, gone.address]));
    prober.untrack(gone.address);
    const before = { kept: kept.probes, dropped: dropped.probes, gone: gone.probes };
    await sleep(300);
    expect(kept.probes).toBeGreaterThan(before.kept);
    expect(dropped.probes).toBe(before.dropped);
    expect(gone.probes).toBe(before.gone);
  });
});
