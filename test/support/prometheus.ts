/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4):
 * it throws on anything a Prometheus server would reject or misread, so a
 * test that parses /metrics also proves the output is well formed.
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);

class ParseError extends Error {
  constructor(lineNumber: number, line: string, problem: string) {
    super(`/metrics line ${lineNumber}: ${problem}: ${JSON.stringify(line)}`);
  }
}

/** As Prometheus reads values (Go's ParseFloat): NaN and Inf in any case, prom-client writes "Nan". */
function parseValue(text: string): number | undefined {
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(text);
  if (special) {
    if (special[2]?.toLowerCase() === "nan") return special[1] ? undefined : Number.NaN;
    return special[1] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

/** Reads `{a="x",b="y"}` starting at `start` (the brace); returns the labels and the index after `}`. */
function parseLabels(line: string, start: number, fail: (problem: string) => never) {
  const labels: Record<string, string> = {};
  let i = start + 1;
  while (line[i] !== "}") {
    const nameMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
    if (!nameMatch) fail("bad label name");
    const name = nameMatch[0];
    i += name.length;
    if (line[i] !== "=" || line[i + 1] !== '"') fail(`label ${name} is not followed by ="`);
    i += 2;
    let value = "";
    for (;;) {
      const c = line[i];
      if (c === undefined) fail(`unterminated value of label ${name}`);
      if (c === '"') break;
      if (c === "\\") {
        const escaped = line[i + 1];
        if (escaped === "\\") value += "\\";
        else if (escaped === '"') value += '"';
        else if (escaped === "n") value += "\n";
        else fail(`bad escape in label ${name}`);
        i += 2;
      } else {
        value += c;
        i += 1;
      }
    }
    i += 1;
    if (!LABEL_NAME.test(name) || name.startsWith("__")) fail(`reserved or bad label name ${name}`);
    if (name in labels) fail(`label ${name} twice`);
    labels[name] = value;
    if (line[i] === ",") i += 1;
    else if (line[i] !== "}") fail("labels must be separated by commas");
  }
  return { labels, end: i + 1 };
}

/** Which family a sample name belongs to, given the family's type. */
function belongsTo(sampleName: string, family: MetricFamily): boolean {
  if (family.type === "histogram") {
    return [`${family.name}_bucket`, `${family.name}_sum`, `${family.name}_count`].includes(sampleName);
  }
  if (family.type === "summary") {
    return [family.name, `${family.name}_sum`, `${family.name}_count`].includes(sampleName);
  }
  return sampleName === family.name;
}

function seriesKey(sample: Sample, without?: string): string {
  const labels = Object.entries(sample.labels)
    .filter(([name]) => name !== without)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return `${sample.name}${JSON.stringify(labels)}`;
}

function checkHistogram(family: MetricFamily): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const sample of family.samples) {
    const key = seriesKey({ ...sample, name: family.name }, "le");
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith("_bucket")) {
      const le = sample.labels.le;
      const bound = le === undefined ? undefined : parseValue(le);
      if (bound === undefined) throw new Error(`${family.name}: bucket without a numeric le label`);
      entry.buckets.push([bound, sample.value]);
    } else if (sample.name.endsWith("_count")) {
      entry.count = sample.value;
    }
  }
  for (const [key, { buckets, count }] of series) {
    for (let i = 1; i < buckets.length; i++) {
      const [previousBound, previousCount] = buckets[i - 1] as [number, number];
      const [bound, bucketCount] = buckets[i] as [number, number];
      if (bound <= previousBound) throw new Error(`${key}: le bounds are not increasing`);
      if (bucketCount < previousCount) throw new Error(`${key}: bucket counts are not cumulative`);
    }
    const last = buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${key}: no le="+Inf" bucket`);
    if (count !== last[1]) throw new Error(`${key}: _count ${count} differs from the +Inf bucket ${last[1]}`);
  }
}

export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  if (text.length > 0 && !text.endsWith("\n")) throw new Error("/metrics: the last line has no line feed");
  const families = new Map<string, MetricFamily>();
  const finished = new Set<string>();
  const typed = new Set<string>();
  const series = new Set<string>();
  let current: MetricFamily | undefined;

  const family = (name: string): MetricFamily => {
    let found = families.get(name);
    if (!found) {
      found = { name, type: "untyped", help: undefined, samples: [] };
      families.set(name, found);
    }
    return found;
  };
  const enter = (next: MetricFamily, fail: (problem: string) => never) => {
    if (current === next) return;
    if (finished.has(next.name)) fail(`family ${next.name} is split in two groups`);
    if (current) finished.add(current.name);
    current = next;
  };

  text.split("\n").forEach((line, index) => {
    const fail: (problem: string) => never = (problem) => {
      throw new ParseError(index + 1, line, problem);
    };
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const directive = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!directive) return; // a plain comment
      const [, keyword, name = "", rest = ""] = directive;
      if (!METRIC_NAME.test(name)) fail("bad metric name");
      const target = family(name);
      enter(target, fail);
      if (keyword === "HELP") {
        if (target.help !== undefined) fail("second HELP");
        target.help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"));
      } else {
        if (!TYPES.has(rest.trim() as MetricType)) fail("unknown type");
        if (target.samples.length > 0) fail("TYPE after the family's samples");
        if (typed.has(name)) fail("second TYPE");
        typed.add(name);
        target.type = rest.trim() as MetricType;
      }
      return;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nameMatch) fail("bad metric name");
    const name = nameMatch[0];
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) {
      const parsed = parseLabels(line, name.length, fail);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    }
    const fields = rest.trim().split(/\s+/);
    if (!/^\s/.test(rest) || fields.length < 1 || fields.length > 2) fail("expected a value and an optional timestamp");
    const value = parseValue(fields[0] as string);
    if (value === undefined) fail("bad value");
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) fail("bad timestamp");

    const owner =
      current && belongsTo(name, current)
        ? current
        : ([...families.values()].find((candidate) => belongsTo(name, candidate)) ?? family(name));
    enter(owner, fail);
    const sample = { name, labels, value: value as number };
    const key = seriesKey(sample);
    if (series.has(key)) fail("the same series twice");
    series.add(key);
    if (owner.type === "counter" && !(sample.value >= 0)) fail("a counter below zero");
    owner.samples.push(sample);
  });

  for (const found of families.values()) {
    if (found.type === "histogram") checkHistogram(found);
  }
  return families;
}

/**
 * The value of the one sample called `name` whose labels include `labels`;
 * 0 when there is none yet (prom-client shows a labelled series only once
 * it has moved). Throws when several samples match.
 */
export function sampleValue(
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const matches = [...families.values()]
    .flatMap((found) => found.samples)
    .filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
    );
  if (matches.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${matches.length} samples`);
  return matches[0]?.value ?? 0;
}

/** Fetches and strictly parses a /metrics endpoint. */
export async function scrape(url: string): Promise<Map<string, MetricFamily>> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  const contentType = res.headers.get("content-type") ?? "";
  if (!/^text\/plain;\s*version=0\.0\.4/.test(contentType)) throw new Error(`GET ${url}: content type ${contentType}`);
  return parsePrometheusText(await res.text());
}
