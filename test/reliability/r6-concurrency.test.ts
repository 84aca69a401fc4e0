import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { openStore, type Store } from "../../packages/gateway/src/store/store.ts";
import { describeKeyEvent, type KeyRecorder, startKeyRecorder } from "../support/key-recorder.ts";
import { createDatabase } from "../support/postgres.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/processes.ts";
import { type System, startSystem } from "../support/system.ts";
import { startXvfb, type Xvfb } from "../support/xvfb.ts";

/**
 * R6: many clients at once on one resource. Renames of one proxy through two replicas on one PostgreSQL all
 * succeed and leave one of the names sent; press_key calls on one session run one after another, never mixing
 * their key events.
 */

const RENAMES = 500;
const PRESSES = 50;
const figures: Record<string, number> = {};

afterAll(() => {
  console.info(`R6 figures: ${JSON.stringify(figures)}`);
});

describe("R6 concurrent renames of one proxy across two replicas", () => {
  let store: Store;
  let gateways: GatewayProcess[] = [];
  let apiKey: string;
  let proxyId: string;

  beforeAll(async () => {
    const databaseUrl = await createDatabase(inject("postgresUrl"), "r6");
    const env = { DATABASE_URL: databaseUrl, SECRETS_KEY: randomBytes(32).toString("hex") };
    gateways = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
    store = await openStore({ databaseUrl });
    ({ key: apiKey } = await createApiKey(store, "org-r6", "r6"));
    const res = await fetch(`${gateways[0]?.url}/proxies`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "datacenter", name: "start" }),
    });
    expect(res.status).toBe(200);
    proxyId = ((await res.json()) as { id: string }).id;
  });

  afterAll(async () => {
    await Promise.allSettled(gateways.map((gateway) => gateway.stop()));
    await store?.close();
  });

  it(`answers all ${RENAMES} concurrent renames with 200 and keeps one of the names sent`, async () => {
    const names = Array.from({ length: RENAMES }, (_, i) => `concurrent-${i}`);
    const started = performance.now();
    const answers = await Promise.all(
      names.map(async (name, i) => {
        const res = await fetch(`${gateways[i % 2]?.url}/proxies/${proxyId}`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ name }),
        });
        return { status: res.status, body: (await res.json()) as { name?: string; code?: string } };
      }),
    );
    figures.renameBurstMs = Math.round(performance.now() - started);
    const failed = answers.filter((answer) => answer.status !== 200);
    figures.renamesOk = answers.length - failed.length;
    expect(failed.slice(0, 5)).toEqual([]);
    // Each answer shows its own name: no request saw another's write as its result.
    answers.forEach((answer, i) => {
      expect(answer.body.name).toBe(names[i]);
    });
    const stored = await store.sql.query<{ name: string }>("SELECT name FROM proxies WHERE id = $1", [proxyId]);
    expect(names).toContain(stored[0]?.name);
    for (const gateway of gateways) {
      const res = await fetch(`${gateway.url}/proxies/${proxyId}`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(((await res.json()) as { name: string }).name).toBe(stored[0]?.name);
    }
  });
});

describe("R6 concurrent press_key on one session", () => {
  let xvfb: Xvfb;
  let recorder: KeyRecorder;
  let system: System;

  beforeAll(async () => {
    xvfb = await startXvfb();
    recorder = await startKeyRecorder(xvfb.display);
    // More than the default 32 presses may wait: all 50 are queued at once.
    system = await startSystem({
      store: "sqlite",
      agentEnv: { DISPLAY: xvfb.display, AGENT_MAX_QUEUED_PRESSES: "64" },
    });
  });

  afterAll(async () => {
    await system?.stop();
    await recorder?.close();
    await xvfb?.stop();
  });

  /** Request i's keys: a letter and a digit that no other request shares as a pair, then Tab to close it. */
  const sequenceOf = (i: number) => [String.fromCharCode(97 + Math.floor(i / 10)), String(i % 10), "Tab"];
  const eventsOf = (i: number) => sequenceOf(i).flatMap((key) => [`press ${key}`, `release ${key}`]);

  it(`never interleaves the key events of ${PRESSES} concurrent press_key calls`, async () => {
    recorder.clear();
    const started = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: PRESSES }, async (_, i) => {
        const res = await system.api(`/browsers/${system.session.id}/computer/press_key`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ keys: sequenceOf(i) }),
        });
        return res.status;
      }),
    );
    figures.pressBurstMs = Math.round(performance.now() - started);
    expect(statuses).toEqual(Array(PRESSES).fill(200));
    const perRequest = eventsOf(0).length;
    const events = (await recorder.waitForEvents(PRESSES * perRequest)).map(describeKeyEvent);
    expect(events).toHaveLength(PRESSES * perRequest);

    // The stream must cut into whole sequences, each request's exactly once.
    const seen = new Set<number>();
    for (let at = 0; at < events.length; at += perRequest) {
      const block = events.slice(at, at + perRequest);
      const request = Array.from({ length: PRESSES }, (_, i) => i).find(
        (i) => !seen.has(i) && JSON.stringify(eventsOf(i)) === JSON.stringify(block),
      );
      expect(
        request,
        `events ${at}–${at + perRequest - 1} are no request's whole sequence: ${block.join(", ")}`,
      ).toBeDefined();
      seen.add(request as number);
    }
    expect(seen.size).toBe(PRESSES);
    figures.keyEvents = events.length;
    expect(await recorder.keysDown()).toEqual([]);
  });
});
