import { readFileSync } from "node:fs";

export interface AgentConfig {
  /** host:port the gRPC server listens on. */
  listen: string;
  /** X display to press keys on; undefined when the host has none. */
  display: string | undefined;
  logLevel: string;
  tls: { cert: Buffer; key: Buffer; clientCa: Buffer | undefined } | undefined;
  /** Chromium's DevTools endpoint on this host, reported by Describe. */
  cdpWsUrl: string | undefined;
  /** host:port of the Prometheus /metrics listener; undefined when turned off. */
  metricsListen: string | undefined;
}

/** A configuration problem: the process prints it as one line and exits. */
export class ConfigError extends Error {}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function readFile(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${path}: ${(error as Error).message}`);
  }
}

const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/;

export function loadConfig(env: NodeJS.ProcessEnv): AgentConfig {
  const listen = env.AGENT_LISTEN || "127.0.0.1:50051";
  if (!HOST_PORT.test(listen)) {
    throw new ConfigError(`AGENT_LISTEN must be host:port, got "${listen}"`);
  }
  const metricsListen = env.AGENT_METRICS_LISTEN || "127.0.0.1:9464";
  if (metricsListen !== "off" && !HOST_PORT.test(metricsListen)) {
    throw new ConfigError(`AGENT_METRICS_LISTEN must be host:port or off, got "${metricsListen}"`);
  }
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  const certPath = env.AGENT_TLS_CERT;
  const keyPath = env.AGENT_TLS_KEY;
  if (Boolean(certPath) !== Boolean(keyPath)) {
    throw new ConfigError("AGENT_TLS_CERT and AGENT_TLS_KEY must be set together");
  }
  const clientCaPath = env.AGENT_TLS_CLIENT_CA;
  if (clientCaPath && !certPath) throw new ConfigError("AGENT_TLS_CLIENT_CA needs AGENT_TLS_CERT and AGENT_TLS_KEY");
  const tls =
    certPath && keyPath
      ? {
          cert: readFile("AGENT_TLS_CERT", certPath),
          key: readFile("AGENT_TLS_KEY", keyPath),
          clientCa: clientCaPath ? readFile("AGENT_TLS_CLIENT_CA", clientCaPath) : undefined,
        }
      : undefined;
  return {
    listen,
    display: env.DISPLAY || undefined,
    logLevel,
    tls,
    cdpWsUrl: env.AGENT_CDP_WS_URL || undefined,
    metricsListen: metricsListen === "off" ? undefined : metricsListen,
  };
}
