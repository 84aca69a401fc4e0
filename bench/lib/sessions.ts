import { setTimeout as sleep } from "node:timers/promises";
import { CdpClient } from "./cdp-client.ts";
import { browserProcessesVia, devToolsUrlOf, waitForFocusedSpare } from "./chromium.ts";
import type { BrowserGateway } from "./environment.ts";

/** How long the first POST may wait for the gateway's first host check to find the agent. */
const FIRST_HOST_CHECK_MS = 20_000;

export interface CreatedSession {
  session_id: string;
  cdp_ws_url: string;
}

/**
 * POST /browsers on the browser gateway with `body`. A benchmark run alone (--only) may ask before the
 * gateway's first host checks found the agent: a 503 is retried for a while.
 */
export async function createSession(gateway: BrowserGateway, body: object = {}): Promise<CreatedSession> {
  const headers = { authorization: `Bearer ${gateway.apiKey}`, "content-type": "application/json" };
  const started = performance.now();
  for (;;) {
    const response = await fetch(`${gateway.process.url}/browsers`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status === 200) return JSON.parse(text) as CreatedSession;
    if (response.status !== 503 || performance.now() - started > FIRST_HOST_CHECK_MS) {
      throw new Error(`POST /browsers answered ${response.status}: ${text}`);
    }
    await sleep(100);
  }
}

export async function deleteSession(gateway: BrowserGateway, sessionId: string): Promise<void> {
  const response = await fetch(`${gateway.process.url}/browsers/${sessionId}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${gateway.apiKey}` },
  });
  await response.arrayBuffer();
  if (response.status !== 204) throw new Error(`DELETE /browsers/${sessionId} answered ${response.status}`);
}

/**
 * The loopback DevTools URL of a session's browser, once its browser process is shown (through
 * `cdpWsUrl`) to be `spare`, the warm spare that had the focus: the direct leg then reaches the very
 * browser the gateway leg does.
 */
async function directDevToolsUrl(cdpWsUrl: string, spare: number): Promise<string> {
  const processes = await browserProcessesVia(cdpWsUrl);
  if (!processes.some((p) => p.type === "browser" && p.id === spare)) {
    throw new Error(`the session's browser is not the warm spare (pid ${spare}) that had the focus`);
  }
  const directUrl = devToolsUrlOf(spare);
  if (!directUrl) throw new Error(`no DevToolsActivePort for the spare browser (pid ${spare})`);
  return directUrl;
}

/** A session whose browser is known by pid, reachable through the gateway and on its own DevTools socket. */
export interface FocusedSession {
  session: CreatedSession;
  /** The pid of the session's browser: the warm spare that had the focus. */
  spare: number;
  /** The browser's own loopback DevTools URL. */
  directUrl: string;
  /** Opens a CDP client on `url`; it is closed when the session ends. */
  open(url: string): Promise<CdpClient>;
}

/**
 * Runs `use` on a new session of the browser gateway, whose browser is the warm spare that had the
 * focus (the agent hands that one to the next session), then closes the CDP clients opened through
 * it and deletes the session. After a failure, the failure is what is reported (the environment
 * stops everything anyway).
 */
export async function withFocusedSession<T>(
  gateway: BrowserGateway,
  use: (focused: FocusedSession) => Promise<T>,
): Promise<T> {
  const spare = await waitForFocusedSpare(gateway.agent);
  const session = await createSession(gateway);
  const clients: CdpClient[] = [];
  let failed = false;
  try {
    const directUrl = await directDevToolsUrl(session.cdp_ws_url, spare);
    const open = async (url: string) => {
      const client = await CdpClient.open(url);
      clients.push(client);
      return client;
    };
    return await use({ session, spare, directUrl, open });
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await deleteSession(gateway, session.session_id).catch((error: unknown) => {
      if (!failed) throw error;
    });
  }
}
