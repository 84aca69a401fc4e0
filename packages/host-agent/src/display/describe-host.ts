import type { DescribeResponseSchema } from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AgentConfig } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { AGENT_VERSION } from "../version.ts";
import { readScreenSize } from "./screen-size.ts";

/** What this host offers and which session it runs, for the gateway's host checks. */
export async function describeHost(
  config: Pick<AgentConfig, "display">,
  slot: Pick<BrowserSlot, "hasBrowser" | "currentSessionId" | "instance">,
  logger: Logger,
): Promise<MessageInitShape<typeof DescribeResponseSchema>> {
  // An X server that is down leaves the size unknown (0) rather than the whole answer missing.
  const screen = config.display
    ? await readScreenSize(config.display).catch((error: Error) => {
        logger.warn({ err: error, display: config.display }, "cannot read the screen size");
        return undefined;
      })
    : undefined;
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
