import { createSocket } from "node:dgram";
import { once } from "node:events";
import { decodeAnswer, encodeProbe, type ProbeStatus } from "@browser-infra/contract";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type ProbeResponder, startProbeResponder } from "../../src/liveness/probe-responder.ts";

let responder: ProbeResponder | undefined;
const client = createSocket("udp4");

afterEach(async () => {
  await responder?.close();
  responder = undefined;
});
afterAll(() => client.close());

/** A free UDP port on loopback. */
async function freePort(): Promise<number> {
  const probe = createSocket("udp4");
  await new Promise<void>((resolve) => probe.bind(0, "127.0.0.1", resolve));
  const { port } = probe.address();
  await new Promise<void>((resolve) => probe.close(resolve));
  return port;
}

/** Sends `datagram` and resolves with the first datagram back, or undefined after 300 ms. */
async function ask(port: number, datagram: Buffer): Promise<Buffer | undefined> {
  const answered = once(client, "message").then(([message]) => message as Buffer);
  client.send(datagram, port, "127.0.0.1");
  return Promise.race([answered, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 300))]);
}

describe("the agent's probe responder", () => {
  it("answers a probe with its nonce, whether the agent serves, and the version of its state now", async () => {
    const port = await freePort();
    let state: { status: ProbeStatus; version: number } = { status: "serving", version: 7 };
    responder = await startProbeResponder("127.0.0.1", port, () => state);
    const nonce = Buffer.from("a1a2a3a4a5a6a7a8", "hex");
    expect(decodeAnswer((await ask(port, encodeProbe(nonce))) as Buffer)).toEqual({
      nonce,
      status: "serving",
      version: 7,
    });
    state = { status: "not_serving", version: 8 };
    expect(decodeAnswer((await ask(port, encodeProbe(nonce))) as Buffer)).toMatchObject({
      status: "not_serving",
      version: 8,
    });
  });

  it("answers nothing that is not a probe", async () => {
    const port = await freePort();
    responder = await startProbeResponder("127.0.0.1", port, () => ({ status: "serving", version: 1 }));
    expect(await ask(port, Buffer.from("hello, is anyone there?"))).toBeUndefined();
  });

  it("refuses to start on a port another socket holds, so the agent can say it goes without", async () => {
    const port = await freePort();
    responder = await startProbeResponder("127.0.0.1", port, () => ({ status: "serving", version: 1 }));
    await expect(startProbeResponder("127.0.0.1", port, () => ({ status: "serving", version: 1 }))).rejects.toThrow();
  });
});
