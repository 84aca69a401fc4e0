import {
  DEFAULT_STEP_DELAY_MS,
  type PlannedInput,
  plannedDurationMs,
  textKeysyms,
  textSettleAllowanceMs,
  validateKeyItems,
} from "@browser-infra/keysyms";
import type { Principal } from "../../auth/api-keys.ts";
import { invalidInput } from "../../errors.ts";
import { hostCallError } from "../../hosts/host-errors.ts";
import type { HostAgentClient } from "../../hosts/host-pool.ts";
import type { PressKeyDeps } from "../press-key.ts";
import { useSession } from "../use-session.ts";
import type { ClickMouseBody, DragMouseBody, MoveMouseBody, ScrollBody, TypeTextBody } from "./schemas.ts";

export interface CallMeta {
  requestId: string;
  signal?: AbortSignal;
}

/**
 * Checks what the schema cannot (hold_keys names, the call's total waiting), then calls the session's host
 * with a deadline of AGENT_TIMEOUT_MS plus that waiting. Once the call may have reached the host, a failure
 * is never marked retryable: a retry could click or type twice.
 */
async function callHost<T>(
  deps: PressKeyDeps,
  principal: Principal,
  idOrName: string,
  check: { holdKeys?: readonly string[]; planned?: PlannedInput; extraMs?: number; problems?: string[] },
  meta: CallMeta,
  call: (
    client: HostAgentClient,
    sessionId: string,
    options: { timeoutMs: number; requestId: string; signal?: AbortSignal },
  ) => Promise<T>,
): Promise<T> {
  const problems = [...(check.problems ?? []), ...validateKeyItems("hold_keys", check.holdKeys ?? [])];
  const planned = check.planned ? plannedDurationMs(check.planned) : 0;
  if (planned > deps.maxPressDurationMs) {
    problems.push(`the call would wait ${planned} ms in all (delays and movement); at most ${deps.maxPressDurationMs}`);
  }
  if (problems.length > 0) throw invalidInput(problems);
  const session = await useSession(deps.store, principal, idOrName);
  try {
    return await call(deps.hosts.client(session.hostAddress), session.id, {
      timeoutMs: deps.agentTimeoutMs + planned + (check.extraMs ?? 0),
      requestId: meta.requestId,
      signal: meta.signal,
    });
  } catch (error) {
    throw hostCallError(error, session.hostAddress, true, session.id);
  }
}

export async function moveMouse(
  deps: PressKeyDeps,
  principal: Principal,
  idOrName: string,
  body: MoveMouseBody,
  meta: CallMeta,
): Promise<void> {
  const smooth = body.smooth ?? false;
  const durationMs = body.duration_ms ?? 0;
  const holdKeys = body.hold_keys ?? [];
  await callHost(
    deps,
    principal,
    idOrName,
    { holdKeys, planned: { kind: "move", smooth, durationMs } },
    meta,
    (client, sessionId, options) =>
      client.moveMouse({ sessionId, x: body.x, y: body.y, smooth, durationMs, holdKeys }, options),
  );
}

export async function clickMouse(
  deps: PressKeyDeps,
  principal: Principal,
  idOrName: string,
  body: ClickMouseBody,
  meta: CallMeta,
): Promise<void> {
  const clickType = body.click_type ?? "click";
  const clicks = body.num_clicks ?? 1;
  const holdKeys = body.hold_keys ?? [];
  const problems = clicks > 1 && clickType !== "click" ? ['num_clicks: more than one needs click_type "click"'] : [];
  await callHost(
    deps,
    principal,
    idOrName,
    { holdKeys, problems, planned: { kind: "click", clicks } },
    meta,
    (client, sessionId, options) =>
      client.clickMouse(
        { sessionId, x: body.x, y: body.y, button: body.button ?? "left", clickType, numClicks: clicks, holdKeys },
        options,
      ),
  );
}

export async function dragMouse(
  deps: PressKeyDeps,
  principal: Principal,
  idOrName: string,
  body: DragMouseBody,
  meta: CallMeta,
): Promise<void> {
  const holdKeys = body.hold_keys ?? [];
  const drag = {
    delayMs: body.delay ?? 0,
    smooth: body.smooth ?? false,
    durationMs: body.duration_ms ?? 0,
    stepsPerSegment: body.steps_per_segment ?? 0,
    // 0 travels as "the default" in the agent's contract, so an explicit 0 is the default too.
    stepDelayMs: body.step_delay_ms || DEFAULT_STEP_DELAY_MS,
  };
  const planned: PlannedInput = { kind: "drag", points: body.path.length, ...drag };
  await callHost(deps, principal, idOrName, { holdKeys, planned }, meta, (client, sessionId, options) =>
    client.dragMouse(
      { sessionId, path: body.path.map(([x, y]) => ({ x, y })), button: body.button ?? "left", holdKeys, ...drag },
      options,
    ),
  );
}

export async function scroll(
  deps: PressKeyDeps,
  principal: Principal,
  idOrName: string,
  body: ScrollBody,
  meta: CallMeta,
): Promise<void> {
  const holdKeys = body.hold_keys ?? [];
  await callHost(
    deps,
    principal,
    idOrName,
    { holdKeys, planned: { kind: "scroll" } },
    meta,
    (client, sessionId, options) =>
      client.scroll(
        { sessionId, x: body.x, y: body.y, deltaX: body.delta_x ?? 0, deltaY: body.delta_y ?? 0, holdKeys },
        options,
      ),
  );
}

export async function getMousePosition(
  deps: PressKeyDeps,
  principal: Principal,
  idOrName: string,
  meta: CallMeta,
): Promise<{ x: number; y: number }> {
  const position = await callHost(deps, principal, idOrName, {}, meta, (client, sessionId, options) =>
    client.getMousePosition({ sessionId }, options),
  );
  return { x: position.x, y: position.y };
}

export async function typeText(
  deps: PressKeyDeps,
  principal: Principal,
  idOrName: string,
  body: TypeTextBody,
  meta: CallMeta,
): Promise<void> {
  const parsed = textKeysyms("text", body.text);
  const delayMs = body.delay ?? 0;
  const characters = parsed.ok ? parsed.keysyms.length : 0;
  await callHost(
    deps,
    principal,
    idOrName,
    {
      problems: parsed.ok ? [] : parsed.problems,
      planned: { kind: "type", characters, delayMs },
      extraMs: textSettleAllowanceMs(characters),
    },
    meta,
    (client, sessionId, options) => client.typeText({ sessionId, text: body.text, delayMs }, options),
  );
}
