import {
  type CallContext,
  type ClickMouseRequest,
  Code,
  type DragMouseRequest,
  type GetMousePositionRequest,
  type MoveMouseRequest,
  RpcError,
  type ScrollRequest,
  type TypeTextRequest,
} from "@browser-infra/contract";
import {
  DEFAULT_STEP_DELAY_MS,
  DEFAULT_STEPS_PER_SEGMENT,
  INPUT_LIMITS,
  type PlannedInput,
  plannedDurationMs,
} from "@browser-infra/keysyms";
import {
  DisplayUnavailableError,
  InvalidInputError,
  InvalidKeysError,
  type Keyboard,
  NoSpareKeycodeError,
  type PointerRequest,
  PressCancelledError,
  PressInterruptedError,
  PressQueueFullError,
} from "../keyboard/index.ts";
import { BUTTONS, type ButtonName } from "../mouse/pointer-plan.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { NO_DISPLAY_MESSAGE } from "./press-key-handler.ts";
import { slotRpcError } from "./session-handlers.ts";

export interface InputDeps {
  keyboard: Keyboard | undefined;
  slot: BrowserSlot;
  /** The longest a call may wait on purpose (delays, smooth movements): press_key's duration bound. */
  maxDurationMs: number;
}

function invalid(message: string): RpcError {
  return new RpcError(Code.INVALID_ARGUMENT, message);
}

function button<T extends string>(value: string, allowed: readonly T[], fallback: T): T {
  const name = value === "" ? fallback : value;
  if (!(allowed as readonly string[]).includes(name)) throw invalid(`button: must be one of ${allowed.join(", ")}`);
  return name as T;
}

function checkPlanned(input: PlannedInput, maxDurationMs: number): void {
  const planned = plannedDurationMs(input);
  if (planned > maxDurationMs) {
    throw invalid(`the call would take ${planned} ms of delays and movement; at most ${maxDurationMs} ms on this host`);
  }
}

/** The keyboard's and slot's errors as gRPC statuses, as press_key maps them. */
function inputRpcError(error: unknown, slot: BrowserSlot, sessionId: string): unknown {
  if (error instanceof InvalidKeysError || error instanceof InvalidInputError) {
    return invalid(error.problems.join("; "));
  }
  if (error instanceof NoSpareKeycodeError) return invalid(error.message);
  if (error instanceof DisplayUnavailableError) return new RpcError(Code.FAILED_PRECONDITION, error.message);
  if (error instanceof PressQueueFullError) return new RpcError(Code.RESOURCE_EXHAUSTED, error.message);
  if (error instanceof PressCancelledError) return new RpcError(Code.CANCELLED, error.message);
  if (error instanceof PressInterruptedError) {
    if (slot.shuttingDown) {
      return new RpcError(
        Code.UNAVAILABLE,
        "input interrupted: the host agent is shutting down; everything was released",
      );
    }
    return new RpcError(
      Code.ABORTED,
      `input interrupted: browser session ${sessionId} was stopped; keys and buttons were released`,
    );
  }
  return error;
}

/**
 * The mouse and type_text: each checks its request, then the session, then queues its input on the keyboard
 * in the same turn, so that a stop of the session that follows cancels it (like press_key).
 */
export function inputHandlers(deps: InputDeps) {
  const { slot } = deps;
  const run = async <T>(sessionId: string, work: (keyboard: Keyboard) => Promise<T>): Promise<T> => {
    try {
      slot.require(sessionId);
    } catch (error) {
      throw slotRpcError(error);
    }
    const { keyboard } = deps;
    if (!keyboard) throw new RpcError(Code.FAILED_PRECONDITION, NO_DISPLAY_MESSAGE);
    try {
      return await work(keyboard);
    } catch (error) {
      throw inputRpcError(error, slot, sessionId);
    }
  };
  const pointer = (sessionId: string, request: PointerRequest, context: CallContext) =>
    run(sessionId, (keyboard) => keyboard.pointer(request, context.signal)).then(() => ({}));

  return {
    moveMouse: (request: MoveMouseRequest, context: CallContext) => {
      checkPlanned({ kind: "move", smooth: request.smooth, durationMs: request.durationMs }, deps.maxDurationMs);
      return pointer(
        request.sessionId,
        {
          kind: "move",
          to: { x: request.x, y: request.y },
          smooth: request.smooth,
          durationMs: request.durationMs,
          holdKeys: request.holdKeys,
        },
        context,
      );
    },
    clickMouse: (request: ClickMouseRequest, context: CallContext) => {
      const clickType = request.clickType === "" ? "click" : request.clickType;
      if (clickType !== "click" && clickType !== "down" && clickType !== "up") {
        throw invalid("click_type: must be one of click, down, up");
      }
      const clicks = request.numClicks === 0 ? 1 : request.numClicks;
      if (clicks > INPUT_LIMITS.maxClicks) throw invalid(`num_clicks: must be at most ${INPUT_LIMITS.maxClicks}`);
      if (clicks > 1 && clickType !== "click") throw invalid('num_clicks: more than one needs click_type "click"');
      return pointer(
        request.sessionId,
        {
          kind: "click",
          at: { x: request.x, y: request.y },
          button: button<ButtonName>(request.button, Object.keys(BUTTONS) as ButtonName[], "left"),
          clickType,
          clicks,
          holdKeys: request.holdKeys,
        },
        context,
      );
    },
    dragMouse: (request: DragMouseRequest, context: CallContext) => {
      if (request.path.length < 2 || request.path.length > INPUT_LIMITS.maxPathPoints) {
        throw invalid(`path: must have from 2 to ${INPUT_LIMITS.maxPathPoints} points`);
      }
      if (request.stepsPerSegment > INPUT_LIMITS.maxStepsPerSegment) {
        throw invalid(`steps_per_segment: must be at most ${INPUT_LIMITS.maxStepsPerSegment}`);
      }
      const stepsPerSegment = request.stepsPerSegment || DEFAULT_STEPS_PER_SEGMENT;
      // 0 is the proto's absent; the public API's explicit 0 reaches the agent as the default too.
      const stepDelayMs = request.stepDelayMs || DEFAULT_STEP_DELAY_MS;
      const drag = {
        delayMs: request.delayMs,
        smooth: request.smooth,
        durationMs: request.durationMs,
        stepsPerSegment,
        stepDelayMs,
      };
      checkPlanned({ kind: "drag", points: request.path.length, ...drag }, deps.maxDurationMs);
      return pointer(
        request.sessionId,
        {
          kind: "drag",
          path: request.path.map(({ x, y }) => ({ x, y })),
          button: button(request.button, ["left", "middle", "right"] as const, "left"),
          ...drag,
          holdKeys: request.holdKeys,
        },
        context,
      );
    },
    scroll: (request: ScrollRequest, context: CallContext) => {
      const max = INPUT_LIMITS.maxScrollClicks;
      if (Math.abs(request.deltaX) > max || Math.abs(request.deltaY) > max) {
        throw invalid(`delta_x and delta_y: must be from -${max} to ${max}`);
      }
      return pointer(
        request.sessionId,
        {
          kind: "scroll",
          at: { x: request.x, y: request.y },
          deltaX: request.deltaX,
          deltaY: request.deltaY,
          holdKeys: request.holdKeys,
        },
        context,
      );
    },
    getMousePosition: (request: GetMousePositionRequest, context: CallContext) =>
      run(request.sessionId, (keyboard) => keyboard.pointerPosition(context.signal)),
    typeText: (request: TypeTextRequest, context: CallContext) => {
      const characters = [...request.text].length;
      if (characters > INPUT_LIMITS.maxTextCharacters) {
        throw invalid(`text: must have at most ${INPUT_LIMITS.maxTextCharacters} characters`);
      }
      checkPlanned({ kind: "type", characters, delayMs: request.delayMs }, deps.maxDurationMs);
      return run(request.sessionId, (keyboard) =>
        keyboard.typeText({ text: request.text, delayMs: request.delayMs }, context.signal),
      ).then(() => ({}));
    },
  };
}
