import type { DescribeResponseSchema } from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AgentConfig } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { AGENT_VERSION } from "../version.ts";
import { readScreenSize } from "./screen-size.ts";

/**
 * How long a screen size read is reused. Reading it opens an X connection, and the gateway checking
 * the host describes it every few seconds (every 200 ms in the benchmarks): the connection set-up
 * was a tenth of a busy agent's time. A display's size rarely changes; a change shows this late.
 */
const SCREEN_SIZE_TTL_MS = 10_000;
const screenSizes = new Map<string, { at: number; size: Promise<{ width: number; height: number } | undefined> }>();

/** The display's size, read at most every SCREEN_SIZE_TTL_MS; undefined when the X server does not answer. */
function screenSizeOf(display: string, logger: Logger): Promise<{ width: number; height: number } | undefined> {
  const cached = screenSizes.get(display);
  if (cached && performance.now() - cached.at < SCREEN_SIZE_TTL_MS) return cached.size;
  const size = readScreenSize(display).catch((error: Error) => {
    logger.warn({ err: error, display }, "cannot read the screen size");
    // Not kept: the next Describe asks again.
    screenSizes.delete(display);
    return undefined;
  });
  screenSizes.set(display, { at: performance.now(), size });
  return size;
}

/** What this host offers and which session it runs, for the gateway's host checks. */
export async function describeHost(
  config: Pick<AgentConfig, "display">,
  slot: Pick<BrowserSlot, "hasBrowser" | "currentSessionId" | "instance">,
  logger: Logger,
): Promise<MessageInitShape<typeof DescribeResponseSchema>> {
  // An X server that is down leaves the size unknown (0) rather than the whole answer missing.
  const screen = config.display ? await screenSizeOf(config.display, logger) : undefined;
  return {
    agentVersion: AGENT_VERSION,
    display: config.display ?? "",
    screenWidth: screen?.width ?? 0,
    screenHeight: screen?.height ?? 0,
    hasBrowser: slot.hasBrowser,
    sessionId: slot.currentSessionId ?? "",
    agentInstance: slot.instance,
  };
}
