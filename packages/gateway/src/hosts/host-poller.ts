import type { Logger } from "../logger.ts";
import { type PeriodicTask, runPeriodically } from "../periodic.ts";
import { checkAllHosts, type HostCheckDeps } from "./check-host.ts";

/**
 * Checks every known host now, then every intervalMs. Resolves after the first round, so a
 * gateway that is listening already knows which of its hosts can take a session.
 */
export async function startHostPoller(deps: HostCheckDeps, intervalMs: number, logger: Logger): Promise<PeriodicTask> {
  const onChange: HostCheckDeps["onChange"] = (address, from, to) => {
    const line = { host: address, from, to: to.health, detail: to.detail ?? undefined };
    if (to.health === "serving") logger.info(line, "host is serving");
    else logger.warn(line, "host cannot take sessions");
  };
  const round = () => checkAllHosts({ ...deps, onChange });
  const onError = (error: unknown) => logger.error({ err: error }, "host check round failed");
  await round().catch(onError);
  return runPeriodically(round, intervalMs, onError);
}
