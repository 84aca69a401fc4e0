import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";

const BASE = { AGENT_CHROMIUM_PATH: "none", AGENT_DATA_DIR: "/tmp/host-agent-config-test" };

describe("AGENT_DRAIN_TIMEOUT_MS", () => {
  it("is 0 unless set: a stopping agent ends its session at once, as under systemd and Docker", () => {
    expect(loadConfig(BASE).drainTimeoutMs).toBe(0);
    expect(loadConfig({ ...BASE, AGENT_DRAIN_TIMEOUT_MS: "900000" }).drainTimeoutMs).toBe(900_000);
  });

  it.each(["-1", "1.5", "15m"])("refuses %s", (value) => {
    expect(() => loadConfig({ ...BASE, AGENT_DRAIN_TIMEOUT_MS: value })).toThrow(ConfigError);
  });
});
