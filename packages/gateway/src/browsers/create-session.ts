import { z } from "zod";
import type { Principal } from "../auth/api-keys.ts";
import { ApiError } from "../errors.ts";
import { type SessionRouteDeps, sessionProxyRoute } from "../proxies/session-route.ts";
import { DEFAULT_TIMEOUT_SECONDS } from "../store/browser-sessions.ts";
import type { HostRequirements } from "../store/hosts.ts";
import { newId } from "../store/ids.ts";
import type { Store } from "../store/store.ts";
import type { CdpUrls } from "./cdp/cdp-url.ts";
import { resolveProxyReference } from "./proxy-reference.ts";
import type { SessionLifecycle } from "./session-lifecycle.ts";
import { type BrowserSession, toBrowserSession } from "./session-record.ts";

const MAX_TAGS = 50;
// The public service's bounds: 10 seconds to 72 hours.
const MIN_TIMEOUT_SECONDS = 10;
const MAX_TIMEOUT_SECONDS = 259_200;

const pixels = z
  .number({ error: "must be a number of pixels" })
  .int({ error: "must be a whole number" })
  .positive({ error: "must be positive" });

// Fields of the SDK's create params that a self-hosted host cannot honour: refused, never silently ignored.
const unsupported = z.never({ error: "not supported by this service" }).optional();
const onlyFalse = (what: string) =>
  z.literal(false, { error: `must be false: this service has no ${what}` }).optional();

/** The create params of @onkernel/sdk that fit a self-hosted host pool. */
export const BrowserCreateBody = z.strictObject(
  {
    name: z
      .string({ error: "must be a string" })
      .min(1, { error: "must be 1 to 255 characters" })
      .max(255, { error: "must be 1 to 255 characters" })
      .optional(),
    /** A proxy id, or the name of exactly one proxy. */
    proxy_id: z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }).optional(),
    timeout_seconds: z
      .number({ error: "must be a number of seconds" })
      .int({ error: "must be a whole number of seconds" })
      .min(MIN_TIMEOUT_SECONDS, { error: `must be at least ${MIN_TIMEOUT_SECONDS}` })
      .max(MAX_TIMEOUT_SECONDS, { error: `must be at most ${MAX_TIMEOUT_SECONDS}` })
      .optional(),
    /** true: a host without an X display; false: a host with one; omitted: any host. */
    headless: z.boolean({ error: "must be a boolean" }).optional(),
    /** A host whose screen has exactly this size. Hosts report no refresh rate, so refresh_rate is not matched. */
    viewport: z
      .strictObject({ width: pixels, height: pixels, refresh_rate: pixels.optional() }, { error: "must be an object" })
      .optional(),
    tags: z
      .record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" })
      .refine((tags) => Object.keys(tags).length <= MAX_TAGS, { error: `must have at most ${MAX_TAGS} pairs` })
      .optional(),
    stealth: onlyFalse("stealth mode"),
    gpu: onlyFalse("GPU acceleration"),
    kiosk_mode: onlyFalse("kiosk mode"),
    chrome_policy: unsupported,
    extensions: unsupported,
    invocation_id: unsupported,
    profile: unsupported,
    start_url: unsupported,
    telemetry: unsupported,
  },
  { error: "must be a JSON object" },
);
export type BrowserCreateBody = z.infer<typeof BrowserCreateBody>;

function noHostMessage(requirements: HostRequirements): string {
  const kinds: string[] = [];
  if (requirements.headless === true) kinds.push("without an X display");
  if (requirements.headless === false) kinds.push("with an X display");
  if (requirements.screen) kinds.push(`with a ${requirements.screen.width}x${requirements.screen.height} screen`);
  const kind = kinds.length > 0 ? ` ${kinds.join(" and ")}` : "";
  return `no idle healthy host${kind} is free; try again when a session ends`;
}

export interface CreateSessionDeps extends SessionRouteDeps {
  store: Store;
  lifecycle: SessionLifecycle;
  cdpUrls: CdpUrls;
  /** Active sessions one organization may hold at once; 0: no limit. */
  maxSessionsPerOrg: number;
}

/**
 * Starts a session on one idle healthy host, with a fresh browser of its own. Hosts are taken, and
 * the organization's active sessions counted, in the database, so concurrent creates on any number
 * of replicas never share a host nor exceed the organization's limit.
 */
export async function createSession(
  deps: CreateSessionDeps,
  principal: Principal,
  body: BrowserCreateBody,
  requestId?: string,
): Promise<BrowserSession> {
  const { store } = deps;
  const id = newId();
  const proxy = body.proxy_id === undefined ? undefined : await resolveProxyReference(store, principal, body.proxy_id);
  const proxyRoute = proxy && sessionProxyRoute(deps, proxy, id);
  const requirements: HostRequirements = {
    headless: body.headless,
    screen: body.viewport && { width: body.viewport.width, height: body.viewport.height },
  };
  const outcome = await store.browserSessions.createOnIdleHost(
    {
      id,
      organizationId: principal.organizationId,
      name: body.name ?? null,
      createdAt: new Date().toISOString(),
      timeoutSeconds: body.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
      proxyId: proxy?.id ?? null,
      tags: body.tags ?? null,
    },
    requirements,
    deps.maxSessionsPerOrg,
  );
  if ("session" in outcome) {
    return toBrowserSession(await deps.lifecycle.start(outcome.session, requestId, proxyRoute), deps.cdpUrls);
  }
  if (outcome.failure === "name_taken") {
    throw new ApiError("conflict", `an active browser session is already named "${body.name}"`);
  }
  if (outcome.failure === "organization_limit") {
    // Not retried by the official client: the count falls only when the organization ends a session
    // or one idles out, rarely within the seconds its retries wait, so they would only repeat the refusal.
    throw new ApiError(
      "too_many_requests",
      `this organization already has ${deps.maxSessionsPerOrg} active browser sessions, the most it may hold at once; end one before creating another`,
      { retry: false },
    );
  }
  throw new ApiError("no_host_available", noHostMessage(requirements));
}
