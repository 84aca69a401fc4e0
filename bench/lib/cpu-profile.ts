import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotFunction {
  /** Share of the busy (non-idle) time spent in this function itself. */
  busyPercent: number;
  name: string;
  where: string;
}

export interface ProfileSummary {
  sampledMs: number;
  busyMs: number;
  /** Self time per layer (logging, store, gRPC…), as shares of the busy time. */
  layers: { layer: string; busyPercent: number }[];
  functions: HotFunction[];
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) return url.slice(modules + "node_modules/".length);
  const packages = url.indexOf("/packages/");
  if (packages >= 0) return url.slice(packages + 1);
  return url.replace(/^file:\/\//, "");
}

// First match wins. Native frames (no url) are classified by name: they are the syscalls and
// bindings the layer above them made, such as the SQLite step that waits on fsync. Socket writes
// (writeUtf8String, writev… on a stream handle) are every HTTP response, gRPC frame and PostgreSQL
// query leaving the process; fs.writeSync of a log line is writeString.
const LAYERS: [string, RegExp][] = [
  ["logging (pino, pino-http, redaction, log file writes)", /pino|sonic-boom|redact|^writeString /],
  ["store: SQLite (node:sqlite calls, incl. fsync)", /store\/sqlite-client/],
  ["store: PostgreSQL client (pg)", /^pg|pg-protocol|pg-pool|store\/postgres-client/],
  ["gRPC (grpc-js, http2)", /@grpc\/|node:internal\/http2/],
  ["protobuf-es", /@bufbuild\//],
  ["Express and router", /^express\/|^router\/|body-parser|raw-body/],
  ["validation (zod)", /^zod\//],
  ["metrics (prom-client)", /prom-client|\/metrics\//],
  ["HTTP server (node:_http, net, streams)", /node:_http|node:net|node:internal\/streams|node:stream/],
  ["X11 and keyboard (agent)", /^x11\/|host-agent\/src\/keyboard|keysyms/],
  ["lstat (agent)", /^lstat |fs\/promises/],
  [
    "socket writes (HTTP responses, gRPC frames, SQL queries)",
    /^writev |^writeBuffer |^writeLatin1String |^writeUtf8String /,
  ],
  ["garbage collection", /^\(garbage collector\)/],
  ["application code (packages/*/src)", /^packages\//],
];

function layerOf(name: string, url: string): string {
  const key = `${url ? shortUrl(url) : name} `;
  const byName = `${name} `;
  for (const [layer, pattern] of LAYERS) if (pattern.test(key) || pattern.test(byName)) return layer;
  return url ? "other JavaScript (node internals, libraries)" : "other native and V8";
}

/** Self time of a `node --cpu-prof` profile by layer and by function, as shares of the time not idle. */
export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const perFunction = new Map<string, number>();
  const perLayer = new Map<string, number>();
  let sampledUs = 0;
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    sampledUs += delta;
    const frame = byId.get(id)?.callFrame;
    if (!frame || frame.functionName === "(idle)") return;
    busyUs += delta;
    const fn = `${frame.functionName || "(anonymous)"}\t${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    perFunction.set(fn, (perFunction.get(fn) ?? 0) + delta);
    const layer = layerOf(frame.functionName, frame.url);
    perLayer.set(layer, (perLayer.get(layer) ?? 0) + delta);
  });
  const share = (us: number) => (100 * us) / busyUs;
  return {
    sampledMs: sampledUs / 1000,
    busyMs: busyUs / 1000,
    layers: [...perLayer.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([layer, us]) => ({ layer, busyPercent: share(us) })),
    functions: [...perFunction.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => {
        const [name = "", where = ""] = key.split("\t");
        return { busyPercent: share(us), name, where };
      }),
  };
}
