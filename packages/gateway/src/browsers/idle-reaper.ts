import type { Logger } from "../logger.ts";
import { type PeriodicTask, runPeriodically } from "../periodic.ts";
import type { Store } from "../store/store.ts";

/** Ends the sessions whose idle deadline has passed; with several replicas each session is ended by exactly one. */
export async function endIdleSessions(store: Store, logger: Logger): Promise<void> {
  for (const session of await store.browserSessions.endIdle(new Date().toISOString())) {
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
}

export function startIdleReaper(store: Store, intervalMs: number, logger: Logger): PeriodicTask {
  return runPeriodically(
    () => endIdleSessions(store, logger),
    intervalMs,
    (error) => logger.error({ err: error }, "ending idle sessions failed"),
  );
}
