import http from "node:http";
import net from "node:net";

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as received, decoded as UTF-8. */
  body: string;
  /** From the first byte sent to the last byte received. */
  ms: number;
}

export interface RawRequest {
  method: string;
  /** Sent exactly as given: no normalization, no encoding. */
  path: string;
  /** Header names may repeat: each pair is sent as its own line. */
  headers?: [string, string][];
  body?: string | Buffer;
}

/**
 * One request through node:http with the path and headers sent as given (fetch would normalize the URL, merge
 * duplicate headers and refuse some methods). Content-Length is set from the body unless the headers set it.
 * Rejects when no complete answer arrives within `timeoutMs`.
 */
export function rawRequest(
  baseUrl: string,
  request: RawRequest,
  options: { agent?: http.Agent; timeoutMs?: number } = {},
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const headers: string[] = [];
  for (const [name, value] of request.headers ?? []) headers.push(name, value);
  const names = new Set((request.headers ?? []).map(([name]) => name.toLowerCase()));
  // With headers given as a list, node:http adds no Host header itself, and HTTP/1.1 requires one.
  if (!names.has("host")) headers.unshift("Host", url.host);
  if (request.body !== undefined && !names.has("content-length") && !names.has("transfer-encoding")) {
    headers.push("Content-Length", String(Buffer.byteLength(request.body)));
  }
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: request.method,
      path: request.path,
      // A flat array keeps repeated names as separate header lines.
      headers,
      agent: options.agent ?? false,
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no complete answer within ${timeoutMs} ms: ${request.method} ${request.path}`));
    }, timeoutMs);
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      res.on("end", () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          ms: performance.now() - started,
        });
      });
    });
    req.end(request.body);
  });
}

/**
 * Writes raw bytes to the server and collects everything it sends back until it closes the connection (or
 * `timeoutMs` passes). For requests node:http refuses to send: malformed request lines, conflicting lengths.
 */
export function rawExchange(
  port: number,
  bytes: string | Buffer,
  timeoutMs = 5_000,
): Promise<{ text: string; closed: boolean; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString("latin1"), closed: false, ms: performance.now() - started });
    }, timeoutMs);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      if (chunks.length > 0) resolve({ text: Buffer.concat(chunks).toString("latin1"), closed: true, ms: 0 });
      else reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString("latin1"), closed: true, ms: performance.now() - started });
    });
    socket.write(bytes);
  });
}

/** Status line, headers and body of the first HTTP response in raw text. */
export function parseRawResponse(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf("\r\n\r\n");
  const head = end === -1 ? text : text.slice(0, end);
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end === -1 ? "" : text.slice(end + 4);
  const length = headers["content-length"];
  if (length !== undefined) body = body.slice(0, Number(length));
  else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) body = dechunk(body);
  return { status: Number(statusLine.split(" ")[1] ?? 0), headers, body };
}

function dechunk(raw: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf("\r\n", at);
    if (lineEnd === -1) return out;
    const size = Number.parseInt(raw.slice(at, lineEnd), 16);
    if (!(size > 0)) return out;
    out += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}
