import pino from "pino";

export type Logger = pino.Logger;

/** Paths whose values never reach a log line. */
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "*.password",
  "*.ca_bundle",
  "*.caBundle",
  "*.key",
  "*.apiKey",
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, base: { service: "gateway" }, redact: { paths: REDACT_PATHS, censor: "[redacted]" } },
    destination,
  );
}
