import pino from "pino";

export type Logger = pino.Logger;

const BLOCK_BYTES = 4096;
/** The longest a log line waits in the buffer while the process runs. */
export const LOG_FLUSH_INTERVAL_MS = 100;

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
 * Standard output, written synchronously in blocks of about 4 KiB: one write per line cost the
 * gateway about 6 % of its CPU at 7k requests a second (bench/analysis.md). A line waits at most
 * LOG_FLUSH_INTERVAL_MS, and exit, also after an uncaught exception, writes what is left. Not
 * asynchronous: an asynchronous stream is flushed at exit by a loop that never ends once the
 * reader is gone (sonic-boom retries a failed write forever), so a gateway whose log reader died
 * could not stop.
 */
function stdout(): pino.DestinationStream {
  const destination = pino.destination({
    dest: 1,
    sync: true,
    minLength: BLOCK_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
  });
  // flush(), not flushSync(): on a sync stream it writes the rest at once, and a failed write
  // ends it, where flushSync() retries forever once the reader is gone.
  process.once("exit", () => {
    try {
      destination.flush();
    } catch {
      // Nobody is left to read these lines.
    }
  });
  return destination;
}

export function createLogger(level: string, destination: pino.DestinationStream = stdout()): Logger {
  return pino(
    { level, base: { service: "gateway" }, redact: { paths: REDACT_PATHS, censor: "[redacted]" } },
    destination,
  );
}
