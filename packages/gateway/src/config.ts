import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { createSecureContext } from "node:tls";
import { type Network, parseNetwork } from "@browser-infra/contract";
import { DEFAULT_MAX_UPLOAD_BYTES } from "./browsers/fs/write-file.ts";
import {
  MANAGED_PROXY_TYPES,
  type ProxyUrlTemplates,
  templateProblem,
  templateVariable,
} from "./proxies/url-templates.ts";

export interface GatewayConfig {
  port: number;
  host: string;
  /** PostgreSQL connection string; unset means the embedded SQLite file under dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Host agent addresses (host:port) this gateway may place sessions on. */
  hostAgents: string[];
  /** A DNS name every address of which is a host agent listening on port (HOST_AGENTS_DNS). */
  hostAgentsDns: { name: string; port: number } | undefined;
  agentTls:
    | {
        ca: Buffer;
        cert: Buffer | undefined;
        key: Buffer | undefined;
        /** Name every agent certificate must carry, instead of the host part of the address dialled. */
        serverName: string | undefined;
      }
    | undefined;
  /** Deadline of one gRPC call to a host agent, besides the press duration itself. */
  agentTimeoutMs: number;
  /** 32-byte key for the encryption of proxy secrets at rest. */
  secretsKey: Buffer | undefined;
  logLevel: string;
  /** The largest press_key duration accepted. */
  maxPressDurationMs: number;
  /** A client must send its request headers within this time… */
  httpHeadersTimeoutMs: number;
  /** …and its whole request within this one. */
  httpRequestTimeoutMs: number;
  /** What a proxy health check fetches through the proxy when the caller names no url. */
  proxyCheckUrl: string;
  /** How often every host's health and Describe data are checked. */
  hostCheckIntervalMs: number;
  /** How often sessions past their idle timeout are looked for and ended. */
  idleCheckIntervalMs: number;
  /**
   * Where clients reach this gateway (PUBLIC_URL, an http(s) origin); undefined: derived from
   * HOST and the port bound. Session CDP URLs are built on it (ws:// or wss://).
   */
  publicUrl: string | undefined;
  /** How long a session's CDP token is accepted after it was handed out. */
  cdpTokenTtlSeconds: number;
  /** Every CDP socket is pinged this often, and closed when it did not answer the previous ping. */
  cdpPingIntervalMs: number;
  /** Active sessions one organization may hold at once; 0: no limit (MAX_SESSIONS_PER_ORG). */
  maxSessionsPerOrg: number;
  /** The largest body write_file takes (MAX_UPLOAD_BYTES); larger ones are refused with 413. */
  maxUploadBytes: number;
  /** Proxy checks one organization may run at once on this replica (PROXY_CHECKS_CONCURRENT_PER_ORG). */
  proxyChecksConcurrentPerOrg: number;
  /** Proxy checks one organization may start per minute on this replica (PROXY_CHECKS_PER_MINUTE_PER_ORG). */
  proxyChecksPerMinutePerOrg: number;
  /**
   * Where tenants' proxies may be reached (by a check, by a session's relay) besides what the
   * address policy allows anyway (PROXY_ALLOWED_NETWORKS).
   */
  proxyAllowedNetworks: Network[];
  /** The upstream URL template of each managed proxy type (PROXY_URL_TEMPLATE_<TYPE>); secrets: never logged. */
  proxyUrlTemplates: ProxyUrlTemplates;
  /** Whether GET /metrics answers clients other than loopback ones (METRICS_PUBLIC). */
  metricsPublic: boolean;
}

export class ConfigError extends Error {}

/** A port one can dial: 1 to 65535. */
const PORT = "(6553[0-5]|655[0-2]\\d|65[0-4]\\d\\d|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3})";
/** A host agent address: host:port, an IPv6 host in brackets. */
export const HOST_PORT = new RegExp(`^(\\[[0-9a-fA-F:]+\\]|[^:\\s/]+):${PORT}$`);
/** How a gateway dials a host agent: host:port, or unix:/absolute/path for an agent on the same machine. */
export const AGENT_ADDRESS = new RegExp(`${HOST_PORT.source}|^unix:\\/\\S+$`);

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw !== "true" && raw !== "false") throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  return raw === "true";
}

function httpUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  if (!URL.canParse(raw) || !["http:", "https:"].includes(new URL(raw).protocol)) {
    throw new ConfigError(`${name} must be an http:// or https:// URL, got "${raw}"`);
  }
  return raw;
}

/** An http(s) origin, without path, query or fragment: the CDP path is appended to it. */
function publicUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (
    !url ||
    !["http:", "https:"].includes(url.protocol) ||
    url.pathname !== "/" ||
    url.search ||
    url.hash ||
    url.username
  ) {
    throw new ConfigError(
      `PUBLIC_URL must be an http:// or https:// origin such as https://browsers.example.com, got "${raw}"`,
    );
  }
  return url.origin;
}

function file(name: string, path: string | undefined): Buffer | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${name}: cannot read ${path}: ${(error as Error).message}`);
  }
}

/** A DNS name: dot-separated labels of letters, digits, hyphens and underscores (Docker allows them), maybe a final dot. */
const DNS_NAME =
  /^(?=.{1,253}\.?$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** The HTTP bind address: an IP address or a name; whether it is this machine's is up to listen(). */
function bindHost(raw: string | undefined): string {
  const host = raw || "127.0.0.1";
  if (!isIP(host) && !DNS_NAME.test(host)) {
    throw new ConfigError(`HOST must be an IP address or a host name, got "${host}"`);
  }
  return host;
}

/**
 * The agent TLS files, parsed now: gRPC reads them only when it dials, so a bad file would leave
 * a gateway that runs and reaches no agent.
 */
function checkAgentTls(ca: Buffer, cert: Buffer | undefined, key: Buffer | undefined): void {
  try {
    new X509Certificate(ca);
  } catch (error) {
    throw new ConfigError(`AGENT_TLS_CA holds no PEM certificate: ${(error as Error).message}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new ConfigError(
      `AGENT_TLS_CLIENT_CERT and AGENT_TLS_CLIENT_KEY are not a PEM certificate and its key: ${(error as Error).message}`,
    );
  }
}

function dnsNameAndPort(name: string, raw: string | undefined): { name: string; port: number } | undefined {
  if (!raw) return undefined;
  const [, host = "", digits = ""] = /^(.+):(\d{1,5})$/.exec(raw.trim()) ?? [];
  const port = Number(digits);
  if (!DNS_NAME.test(host) || port < 1 || port > 65535) {
    throw new ConfigError(`${name} must be name:port (a DNS name and a port from 1 to 65535), got "${raw}"`);
  }
  return { name: host, port };
}

/** A comma-separated list of CIDR networks; a bad entry is named, since the rest may be long. */
function networkList(env: NodeJS.ProcessEnv, name: string): Network[] {
  const entries = (env[name] ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    const network = parseNetwork(entry);
    if (!network) {
      throw new ConfigError(`${name}: "${entry}" is not an IPv4 or IPv6 network such as 127.0.0.0/8 or fd00::/8`);
    }
    return network;
  });
}

function secretsKey(raw: string | undefined): Buffer | undefined {
  if (!raw) return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, "hex") : Buffer.from(raw, "base64");
  if (key.length !== 32) throw new ConfigError("SECRETS_KEY must be 32 bytes, as 64 hex characters or base64");
  return key;
}

/** PROXY_URL_TEMPLATE_<TYPE> for each managed type; an error never repeats the template (it holds credentials). */
function proxyUrlTemplates(env: NodeJS.ProcessEnv): ProxyUrlTemplates {
  const templates: ProxyUrlTemplates = {};
  for (const type of MANAGED_PROXY_TYPES) {
    const name = templateVariable(type);
    const template = env[name];
    if (template === undefined || template === "") continue;
    const problem = templateProblem(template);
    if (problem) throw new ConfigError(`${name} ${problem}`);
    templates[type] = template;
  }
  return templates;
}

export function loadConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL must be a postgres:// or postgresql:// URL");
  }
  const hostAgents = (env.HOST_AGENTS ?? "")
    .split(",")
    .map((address) => address.trim())
    .filter(Boolean);
  for (const address of hostAgents) {
    if (!AGENT_ADDRESS.test(address)) {
      throw new ConfigError(`HOST_AGENTS: "${address}" is not host:port or unix:/absolute/path`);
    }
  }
  const ca = file("AGENT_TLS_CA", env.AGENT_TLS_CA);
  const cert = file("AGENT_TLS_CLIENT_CERT", env.AGENT_TLS_CLIENT_CERT);
  const key = file("AGENT_TLS_CLIENT_KEY", env.AGENT_TLS_CLIENT_KEY);
  if (Boolean(cert) !== Boolean(key)) {
    throw new ConfigError("AGENT_TLS_CLIENT_CERT and AGENT_TLS_CLIENT_KEY must be set together");
  }
  if (cert && !ca) throw new ConfigError("AGENT_TLS_CLIENT_CERT needs AGENT_TLS_CA");
  if (ca) checkAgentTls(ca, cert, key);
  const serverName = env.AGENT_TLS_SERVER_NAME || undefined;
  if (serverName && !ca) throw new ConfigError("AGENT_TLS_SERVER_NAME needs AGENT_TLS_CA");
  if (serverName && !/^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^[0-9a-fA-F:]+$/.test(serverName)) {
    throw new ConfigError(`AGENT_TLS_SERVER_NAME must be a DNS name or an IP address, got "${serverName}"`);
  }
  const httpHeadersTimeoutMs = integer(env, "HTTP_HEADERS_TIMEOUT_MS", 10_000, 100, 600_000);
  const httpRequestTimeoutMs = integer(env, "HTTP_REQUEST_TIMEOUT_MS", 30_000, 100, 3_600_000);
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs) {
    throw new ConfigError("HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS");
  }
  return {
    port: integer(env, "PORT", 8080, 0, 65535),
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    host: bindHost(env.HOST),
    databaseUrl,
    dataDir: resolve(env.DATA_DIR || "./data"),
    hostAgents,
    hostAgentsDns: dnsNameAndPort("HOST_AGENTS_DNS", env.HOST_AGENTS_DNS),
    agentTls: ca ? { ca, cert, key, serverName } : undefined,
    agentTimeoutMs: integer(env, "AGENT_TIMEOUT_MS", 5_000, 1, 600_000),
    secretsKey: secretsKey(env.SECRETS_KEY),
    logLevel,
    maxPressDurationMs: integer(env, "MAX_PRESS_DURATION_MS", 300_000, 0, 3_600_000),
    proxyCheckUrl: httpUrl(env, "PROXY_CHECK_URL", "https://checkip.amazonaws.com/"),
    hostCheckIntervalMs: integer(env, "HOST_CHECK_INTERVAL_MS", 5_000, 100, 3_600_000),
    idleCheckIntervalMs: integer(env, "IDLE_CHECK_INTERVAL_MS", 5_000, 100, 3_600_000),
    publicUrl: publicUrl(env.PUBLIC_URL),
    cdpTokenTtlSeconds: integer(env, "CDP_TOKEN_TTL_SECONDS", 86_400, 60, 2_592_000),
    cdpPingIntervalMs: integer(env, "CDP_PING_INTERVAL_MS", 30_000, 100, 3_600_000),
    maxSessionsPerOrg: integer(env, "MAX_SESSIONS_PER_ORG", 0, 0, 1_000_000),
    maxUploadBytes: integer(env, "MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES, 1, 1024 ** 4),
    proxyChecksConcurrentPerOrg: integer(env, "PROXY_CHECKS_CONCURRENT_PER_ORG", 4, 1, 1_000),
    proxyChecksPerMinutePerOrg: integer(env, "PROXY_CHECKS_PER_MINUTE_PER_ORG", 60, 1, 100_000),
    proxyAllowedNetworks: networkList(env, "PROXY_ALLOWED_NETWORKS"),
    proxyUrlTemplates: proxyUrlTemplates(env),
    metricsPublic: boolean(env, "METRICS_PUBLIC", false),
  };
}
