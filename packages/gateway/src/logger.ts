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

/**
 * Standard output, written synchronously: an asynchronous stream is flushed
 * at exit by a loop that never ends once the reader is gone (sonic-boom retries
 * a failed write forever), so a gateway whose log reader died could not stop.
 */
function stdout(): pino.DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

export function createLogger(level: string, destination: pino.DestinationStream = stdout()): Logger {
  return pino(
    { level, base: { service: "gateway" }, redact: { paths: REDACT_PATHS, censor: "[redacted]" } },
    destination,
  );
}
