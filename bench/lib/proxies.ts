import { SkipBenchmark } from "./bench.ts";
import type { ServerProcess } from "./processes.ts";

/** Enough rows that 32 connections rarely update the same one at the same moment. */
export const PROXY_COUNT = 64;

/**
 * Creates the proxies to rename through the public API. Skips the benchmark (rather than failing it)
 * while the gateway has no proxy routes at all, which is the one state the suite can expect to meet.
 */
export async function createProxies(gateway: ServerProcess, apiKey: string, count = PROXY_COUNT): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${gateway.url}/proxies`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "datacenter", name: `bench-${i}` }),
    });
    const text = await res.text();
    if (res.status === 404 && i === 0) throw new SkipBenchmark(`POST /proxies answers 404 (${text.slice(0, 120)})`);
    if (res.status !== 200) throw new Error(`POST /proxies answered ${res.status}: ${text.slice(0, 300)}`);
    ids.push((JSON.parse(text) as { id: string }).id);
  }
  return ids;
}

/** A rename of the given proxies in turn, each with a name no earlier request used. */
export function renameTarget(url: string, ids: string[], connections: number, apiKey?: string) {
  return {
    url,
    connections,
    method: "PATCH" as const,
    headers: {
      "content-type": "application/json",
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    },
    paths: ids.map((id) => `/proxies/${id}`),
    bodyTemplate: '{"name":"renamed {n}"}',
  };
}
