import { keepHostHealthOf, setHostHealth } from "../metrics/host-health.ts";
import type { HostCheckResult } from "../store/hosts.ts";
import type { Store } from "../store/store.ts";
import type { HostPool } from "./host-pool.ts";

export interface HostCheckDeps {
  store: Store;
  hosts: HostPool;
  /** Deadline of each call to the agent. */
  timeoutMs: number;
}

/**
 * Asks the agent's health service whether it serves and, when it does, what it offers (Describe),
 * and stores the answer. Only a host that answered both can take a session.
 */
export async function checkHost(deps: HostCheckDeps, address: string): Promise<HostCheckResult> {
  const checkedAt = new Date().toISOString();
  let result: HostCheckResult;
  try {
    if (await deps.hosts.serving(address, deps.timeoutMs)) {
      const described = await deps.hosts.client(address).describe({}, { timeoutMs: deps.timeoutMs });
      result = {
        health: "serving",
        detail: null,
        checkedAt,
        description: {
          agentVersion: described.agentVersion,
          display: described.display,
          screenWidth: described.screenWidth,
          screenHeight: described.screenHeight,
          cdpWsUrl: described.cdpWsUrl,
        },
      };
    } else {
      result = { health: "not_serving", detail: "the agent's health service answers NOT_SERVING", checkedAt };
    }
  } catch (error) {
    result = { health: "unreachable", detail: (error as Error).message, checkedAt };
  }
  await deps.store.hosts.recordCheck(address, result);
  setHostHealth(address, result.health === "serving");
  return result;
}

/**
 * Checks every known host once, in parallel. Every replica may do this at the same time: a
 * result is stored only if no check that started later was stored first.
 */
export async function checkAllHosts(
  deps: HostCheckDeps,
  onChange: (address: string, from: string, to: HostCheckResult) => void,
): Promise<void> {
  const known = await deps.store.hosts.list();
  keepHostHealthOf(known.map((host) => host.address));
  await Promise.all(
    known.map(async (host) => {
      const result = await checkHost(deps, host.address);
      if (result.health !== host.health) onChange(host.address, host.health, result);
    }),
  );
}
