import { INPUT_LIMITS } from "@browser-infra/keysyms";
import { z } from "zod";
import { MAX_KEYS } from "../press-key.ts";

// Bounds come from INPUT_LIMITS (packages/keysyms/src/input-limits.ts), which the host agent checks again.

const objectError = {
  error: (issue: { input: unknown }) => (issue.input === undefined ? "required" : "must be a JSON object"),
};

const coordinate = z
  .number({ error: "must be a number of pixels" })
  .int({ error: "must be a whole number of pixels" })
  .min(0, { error: "must be at least 0" })
  .max(INPUT_LIMITS.maxCoordinate, { error: `must be at most ${INPUT_LIMITS.maxCoordinate}` });

/** A wait in milliseconds; the sum of a call's waits is checked against MAX_PRESS_DURATION_MS. */
function milliseconds(maxMs: number) {
  return z
    .number({ error: "must be a number of milliseconds" })
    .int({ error: "must be a whole number of milliseconds" })
    .min(0, { error: "must be at least 0" })
    .max(maxMs, { error: `must be at most ${maxMs}` });
}

const holdKeys = z
  .array(z.string({ error: "must be a string" }), { error: "must be an array of strings" })
  .max(MAX_KEYS, { error: `must have at most ${MAX_KEYS} items` });

const scrollClicks = z
  .number({ error: "must be a number of wheel clicks" })
  .int({ error: "must be a whole number of wheel clicks" })
  .min(-INPUT_LIMITS.maxScrollClicks, { error: `must be at least -${INPUT_LIMITS.maxScrollClicks}` })
  .max(INPUT_LIMITS.maxScrollClicks, { error: `must be at most ${INPUT_LIMITS.maxScrollClicks}` });

/** The request bodies of the mouse and type_text operations; `maxDurationMs` is MAX_PRESS_DURATION_MS. */
export function inputBodies(maxDurationMs: number) {
  const MoveMouseBody = z.object(
    {
      x: coordinate,
      y: coordinate,
      smooth: z.boolean({ error: "must be true or false" }).optional(),
      duration_ms: milliseconds(maxDurationMs).optional(),
      hold_keys: holdKeys.optional(),
    },
    objectError,
  );
  const ClickMouseBody = z.object(
    {
      x: coordinate,
      y: coordinate,
      button: z
        .enum(["left", "right", "middle", "back", "forward"], {
          error: "must be one of left, right, middle, back, forward",
        })
        .optional(),
      click_type: z.enum(["down", "up", "click"], { error: "must be one of down, up, click" }).optional(),
      num_clicks: z
        .number({ error: "must be a number" })
        .int({ error: "must be a whole number" })
        .min(1, { error: "must be at least 1" })
        .max(INPUT_LIMITS.maxClicks, { error: `must be at most ${INPUT_LIMITS.maxClicks}` })
        .optional(),
      hold_keys: holdKeys.optional(),
    },
    objectError,
  );
  const DragMouseBody = z.object(
    {
      path: z
        .array(z.tuple([coordinate, coordinate], { error: "must be an [x, y] pair of whole numbers" }), {
          error: "must be an array of [x, y] points",
        })
        .min(2, { error: "must have at least 2 points" })
        .max(INPUT_LIMITS.maxPathPoints, { error: `must have at most ${INPUT_LIMITS.maxPathPoints} points` }),
      button: z.enum(["left", "middle", "right"], { error: "must be one of left, middle, right" }).optional(),
      delay: milliseconds(maxDurationMs).optional(),
      duration_ms: milliseconds(maxDurationMs).optional(),
      smooth: z.boolean({ error: "must be true or false" }).optional(),
      step_delay_ms: milliseconds(maxDurationMs).optional(),
      steps_per_segment: z
        .number({ error: "must be a number" })
        .int({ error: "must be a whole number" })
        .min(1, { error: "must be at least 1" })
        .max(INPUT_LIMITS.maxStepsPerSegment, { error: `must be at most ${INPUT_LIMITS.maxStepsPerSegment}` })
        .optional(),
      hold_keys: holdKeys.optional(),
    },
    objectError,
  );
  const ScrollBody = z.object(
    {
      x: coordinate,
      y: coordinate,
      delta_x: scrollClicks.optional(),
      delta_y: scrollClicks.optional(),
      hold_keys: holdKeys.optional(),
    },
    objectError,
  );
  const TypeTextBody = z.object(
    {
      text: z
        .string({ error: "must be a string" })
        .min(1, { error: "must not be empty" })
        // Code points, not UTF-16 units: an emoji is one character typed.
        .refine(
          (text) => text.length <= INPUT_LIMITS.maxTextCharacters || [...text].length <= INPUT_LIMITS.maxTextCharacters,
          {
            error: `must have at most ${INPUT_LIMITS.maxTextCharacters} characters`,
          },
        ),
      delay: milliseconds(maxDurationMs).optional(),
    },
    objectError,
  );
  return { MoveMouseBody, ClickMouseBody, DragMouseBody, ScrollBody, TypeTextBody };
}

export type InputBodies = ReturnType<typeof inputBodies>;
export type MoveMouseBody = z.infer<InputBodies["MoveMouseBody"]>;
export type ClickMouseBody = z.infer<InputBodies["ClickMouseBody"]>;
export type DragMouseBody = z.infer<InputBodies["DragMouseBody"]>;
export type ScrollBody = z.infer<InputBodies["ScrollBody"]>;
export type TypeTextBody = z.infer<InputBodies["TypeTextBody"]>;

export const MousePosition = z.object({
  x: z.number().int().describe("X coordinate of the cursor"),
  y: z.number().int().describe("Y coordinate of the cursor"),
});
