import pino from "pino";

export type Logger = pino.Logger;

/**
 * Standard output, written synchronously: an asynchronous stream is flushed
 * at exit by a loop that never ends once the reader is gone (sonic-boom retries
 * a failed write forever), so an agent whose log reader died could not stop.
 */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "host-agent" } }, pino.destination({ dest: 1, sync: true }));
}
