/**
 * RFC 3339 in UTC with up to nanosecond precision, trailing zeros trimmed,
 * as Go's time.RFC3339Nano prints it (the public service is written in Go).
 */
export function formatRfc3339Nano(seconds: bigint, nanos: number): string {
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  const fraction = nanos === 0 ? "" : `.${String(nanos).padStart(9, "0").replace(/0+$/, "")}`;
  return `${base}${fraction}Z`;
}
