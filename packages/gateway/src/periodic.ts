export interface PeriodicTask {
  /** Stops the schedule and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs task every intervalMs, counted from the end of the previous run, so runs never overlap.
 * A failed run is reported and the schedule goes on.
 */
export function runPeriodically(
  task: () => Promise<void>,
  intervalMs: number,
  onError: (error: unknown) => void,
): PeriodicTask {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(() => {
      running = task()
        .catch(onError)
        .finally(() => {
          if (!stopped) schedule();
        });
    }, intervalMs);
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
