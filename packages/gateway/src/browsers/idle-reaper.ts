import type { Logger } from "../logger.ts";
import { type PeriodicTask, runPeriodically } from "../periodic.ts";
import { IDLE_REASON } from "../store/browser-sessions.ts";
import type { Store } from "../store/store.ts";
import type { SessionLifecycle } from "./session-lifecycle.ts";

/**
 * Ends the sessions whose idle deadline has passed and stops their browsers; with several
 * replicas each session is ended by exactly one.
 */
export async function endIdleSessions(store: Store, lifecycle: SessionLifecycle, logger: Logger): Promise<void> {
  const ended = await store.browserSessions.endIdle(new Date().toISOString());
  for (const session of ended) {
    logger.info(
      {
        sessionId: session.id,
        organizationId: session.organizationId,
        host: session.hostAddress,
        timeoutSeconds: session.timeoutSeconds,
      },
      "session ended after its idle timeout",
    );
  }
  await Promise.all(ended.map((session) => lifecycle.stopOnHost(session.hostAddress, session.id, IDLE_REASON)));
}

export function startIdleReaper(
  store: Store,
  lifecycle: SessionLifecycle,
  intervalMs: number,
  logger: Logger,
): PeriodicTask {
  return runPeriodically(
    () => endIdleSessions(store, lifecycle, logger),
    intervalMs,
    (error) => logger.error({ err: error }, "ending idle sessions failed"),
  );
}
