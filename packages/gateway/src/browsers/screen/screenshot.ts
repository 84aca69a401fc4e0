import { z } from "zod";
import type { Principal } from "../../auth/api-keys.ts";
import { hostCallError } from "../../hosts/host-errors.ts";
import type { BrowserDeps } from "../file-info.ts";
import { useSession } from "../use-session.ts";

/** X coordinates and sizes are 16-bit: no screen is larger. */
const MAX_PIXELS = 65_535;

function pixels(what: string, min: 0 | 1) {
  return z
    .number({ error: (issue) => (issue.input === undefined ? "required" : `must be a number of pixels (${what})`) })
    .int({ error: "must be a whole number of pixels" })
    .min(min, { error: `must be at least ${min}` })
    .max(MAX_PIXELS, { error: `must be at most ${MAX_PIXELS}` })
    .describe(what);
}

/** The official client's ComputerCaptureScreenshotParams; it sends `{}` when there is no region. */
export const ScreenshotBody = z.object(
  {
    region: z
      .object(
        {
          x: pixels("X coordinate of the region's top-left corner", 0),
          y: pixels("Y coordinate of the region's top-left corner", 0),
          width: pixels("width of the region", 1),
          height: pixels("height of the region", 1),
        },
        { error: "must be an object with x, y, width and height" },
      )
      .optional()
      .describe("Part of the screen to capture; absent: the whole screen. It must lie inside the screen."),
  },
  { error: "must be a JSON object" },
);
export type ScreenshotBody = z.infer<typeof ScreenshotBody>;

/**
 * The session's screen (or the region of it) as PNG bytes, from its host. Capturing changes
 * nothing on the host, so a failed call may be retried.
 */
export async function captureScreenshot(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  body: ScreenshotBody,
  requestId: string,
  signal?: AbortSignal,
): Promise<Buffer> {
  const session = await useSession(deps.store, principal, idOrName);
  try {
    const { png } = await deps.hosts
      .client(session.hostAddress)
      .captureScreenshot(
        { sessionId: session.id, region: body.region },
        { timeoutMs: deps.agentTimeoutMs, requestId, signal },
      );
    return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  } catch (error) {
    throw hostCallError(error, session.hostAddress, false, session.id);
  }
}
