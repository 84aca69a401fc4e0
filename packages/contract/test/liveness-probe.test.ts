import { describe, expect, it } from "vitest";
import {
  ANSWER_BYTES,
  decodeAnswer,
  decodeProbe,
  encodeAnswer,
  encodeProbe,
  PROBE_BYTES,
  stateVersion,
} from "../src/liveness-probe.ts";

const nonce = Buffer.from("0123456789abcdef", "hex");

describe("the liveness probe's datagrams", () => {
  it("carry the nonce there and back, with the agent's status and version", () => {
    const probe = encodeProbe(nonce);
    expect(probe).toHaveLength(PROBE_BYTES);
    expect(decodeProbe(probe)).toEqual(nonce);
    const answer = encodeAnswer({ nonce, status: "not_serving", version: 0xfedcba98 });
    expect(answer).toHaveLength(ANSWER_BYTES);
    expect(decodeAnswer(answer)).toEqual({ nonce, status: "not_serving", version: 0xfedcba98 });
    expect(decodeAnswer(encodeAnswer({ nonce, status: "serving", version: 1 }))?.status).toBe("serving");
  });

  it("are refused when they are anything else: another length, another magic, an unknown status", () => {
    expect(decodeProbe(Buffer.concat([encodeProbe(nonce), Buffer.from([0])]))).toBeUndefined();
    expect(decodeProbe(Buffer.from("GET / HTTP/1.1\r\n"))).toBeUndefined();
    expect(decodeAnswer(encodeProbe(nonce))).toBeUndefined();
    const badStatus = encodeAnswer({ nonce, status: "serving", version: 1 });
    badStatus[12] = 7;
    expect(decodeAnswer(badStatus)).toBeUndefined();
    const badMagic = encodeAnswer({ nonce, status: "serving", version: 1 });
    badMagic[0] = 0;
    expect(decodeAnswer(badMagic)).toBeUndefined();
  });

  it("carry a version that changes with the agent's run and its session, and only with them", () => {
    expect(stateVersion("run-1", "")).toBe(stateVersion("run-1", ""));
    expect(stateVersion("run-1", "session-a")).not.toBe(stateVersion("run-1", ""));
    expect(stateVersion("run-1", "session-a")).not.toBe(stateVersion("run-1", "session-b"));
    expect(stateVersion("run-2", "")).not.toBe(stateVersion("run-1", ""));
  });
});
