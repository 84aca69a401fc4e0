import { z } from "zod";
import { pageQuery } from "../http/pagination.ts";
import { PROXY_PROTOCOLS, PROXY_TYPES } from "../store/proxies.ts";
import { caBundleProblem } from "./ca-bundle.ts";
import { isCountryCode } from "./country-codes.ts";
import { bypassHostProblem, proxyHostProblem } from "./host-names.ts";
import { isUsStateCode } from "./us-states.ts";

export const MAX_NAME_CHARACTERS = 255;
export const MAX_BYPASS_HOSTS = 100;
export const MIN_PASSWORD_LENGTH = 5;

// Generous bounds on free-text fields the specification leaves open, so no request can store megabytes.
const MAX_USERNAME_LENGTH = 1024;
const MAX_PASSWORD_LENGTH = 1024;
const MAX_LOCATION_LENGTH = 100;
const MAX_URL_LENGTH = 2048;
const MAX_FILTER_LENGTH = 1024;

function text(expected = "must be a string") {
  return z.string({ error: (issue) => (issue.input === undefined ? "required" : expected) });
}

function object<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.strictObject(shape, {
    error: (issue) => (issue.input === undefined ? "required" : "must be a JSON object"),
  });
}

function problemCheck(problemOf: (value: string) => string | undefined) {
  return (value: string, ctx: z.RefinementCtx) => {
    const problem = problemOf(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  };
}

/** Code points, not UTF-16 units: what a person (and JSON Schema's maxLength) calls characters. */
function characters(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/** Trimmed with String.prototype.trim, then 1 to 255 characters; duplicates are fine. */
export const ProxyName = text()
  .trim()
  .min(1, { error: "must not be empty or only whitespace" })
  .refine((name) => characters(name) <= MAX_NAME_CHARACTERS, {
    error: `must be at most ${MAX_NAME_CHARACTERS} characters after trimming`,
  })
  .meta({ maxLength: MAX_NAME_CHARACTERS });

const CountryCode = text()
  .toUpperCase()
  .refine(isCountryCode, { error: "must be an ISO 3166-1 alpha-2 country code such as US, DE or GB" });

const Protocol = z.enum(PROXY_PROTOCOLS, { error: "must be http or https" }).default("https");

export const BypassHosts = z
  .array(text("must be a host name string").superRefine(problemCheck(bypassHostProblem)), {
    error: "must be an array of host names",
  })
  .max(MAX_BYPASS_HOSTS, { error: `must list at most ${MAX_BYPASS_HOSTS} host names` })
  .default([]);

/** Datacenter and ISP proxies: only the exit country, US unless given. */
export const DatacenterConfig = object({ country: CountryCode.default("US") });
export const IspConfig = DatacenterConfig;

export const ResidentialConfig = object({
  asn: text()
    .regex(/^AS[1-9]\d{0,9}$/, { error: "must be an autonomous system number of the form AS<number>, e.g. AS7922" })
    .optional(),
  city: text()
    .min(1, { error: "must not be empty" })
    .max(MAX_LOCATION_LENGTH, { error: `must be at most ${MAX_LOCATION_LENGTH} characters` })
    .regex(/^\S*$/, { error: "must be a city name without spaces, e.g. sanfrancisco" })
    .optional(),
  country: CountryCode.optional(),
  state: text()
    .regex(/^[A-Za-z]{2}$/, { error: "must be a two-letter state code" })
    .toUpperCase()
    .optional(),
  zip: text()
    .regex(/^\d{5}(-\d{4})?$/, { error: "must be a US ZIP code: 5 digits or ZIP+4 (12345-6789)" })
    .optional(),
  /** Deprecated: the provider does not support OS selection; accepted and kept for compatibility. */
  os: z.enum(["windows", "macos", "android"], { error: "must be windows, macos or android" }).optional(),
}).superRefine((config, ctx) => {
  if (config.city !== undefined && config.country === undefined) {
    ctx.addIssue({ code: "custom", path: ["country"], message: "required when city is given" });
  }
});

export const MobileConfig = object({
  city: text()
    .min(1, { error: "must not be empty" })
    .max(MAX_LOCATION_LENGTH, { error: `must be at most ${MAX_LOCATION_LENGTH} characters` })
    .optional(),
  country: CountryCode.optional(),
  state: text()
    .toUpperCase()
    .refine(isUsStateCode, { error: "must be a two-letter US state code, e.g. CA" })
    .optional(),
}).superRefine((config, ctx) => {
  if (config.state !== undefined && config.country !== undefined && config.country !== "US") {
    ctx.addIssue({ code: "custom", path: ["state"], message: "is US-only; country must be US or left out" });
  }
});

/** What a caller sends for a custom proxy; password and ca_bundle are write-only. */
export const CustomConfigInput = object({
  host: text().superRefine(problemCheck(proxyHostProblem)),
  port: z
    .number({ error: (issue) => (issue.input === undefined ? "required" : "must be an integer from 1 to 65535") })
    .int({ error: "must be an integer from 1 to 65535" })
    .min(1, { error: "must be an integer from 1 to 65535" })
    .max(65535, { error: "must be an integer from 1 to 65535" }),
  username: text()
    .min(1, { error: "must not be empty" })
    .max(MAX_USERNAME_LENGTH, { error: `must be at most ${MAX_USERNAME_LENGTH} characters` })
    // Basic authentication splits user and password at the first colon.
    .refine((username) => !username.includes(":"), { error: "must not contain a colon" })
    .optional(),
  password: text()
    .min(MIN_PASSWORD_LENGTH, { error: `must be at least ${MIN_PASSWORD_LENGTH} characters` })
    .max(MAX_PASSWORD_LENGTH, { error: `must be at most ${MAX_PASSWORD_LENGTH} characters` })
    .optional(),
  ca_bundle: text().superRefine(problemCheck(caBundleProblem)).optional(),
});

function createRequest<Type extends string, Config extends z.ZodType>(type: Type, config: Config) {
  return object({
    type: z.literal(type),
    name: ProxyName.optional(),
    protocol: Protocol,
    bypass_hosts: BypassHosts,
    config,
  });
}

/** POST /proxies: `type` selects the shape of `config`. */
export const CreateProxyRequest = z.discriminatedUnion(
  "type",
  [
    createRequest("datacenter", DatacenterConfig.prefault({})),
    createRequest("isp", IspConfig.prefault({})),
    createRequest("residential", ResidentialConfig.prefault({})),
    createRequest("mobile", MobileConfig.prefault({})),
    createRequest("custom", CustomConfigInput),
  ],
  {
    error: (issue) => {
      if (issue.code !== "invalid_union") return "must be a JSON object";
      const given = (issue.input as { type?: unknown } | undefined)?.type;
      return `${given === undefined ? "required, one of" : "must be one of"} ${PROXY_TYPES.join(", ")}`;
    },
  },
);
export type CreateProxyRequest = z.output<typeof CreateProxyRequest>;

/** PATCH /proxies/{id} (spec 2.3): the name and nothing else. */
export const ProxyUpdateRequest = object({ name: ProxyName });

function queryText() {
  return text("must be given once").max(MAX_FILTER_LENGTH, {
    error: `must be at most ${MAX_FILTER_LENGTH} characters`,
  });
}

/** GET /proxies: offset pagination and the two filters. */
export const ListProxiesQuery = object({
  ...pageQuery,
  name: queryText().optional(),
  query: queryText().optional(),
});
export type ListProxiesQuery = z.output<typeof ListProxiesQuery>;

function targetUrlProblem(url: string): string | undefined {
  if (url.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (!URL.canParse(url)) return "must be an absolute http:// or https:// URL";
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "must be an http:// or https:// URL";
  if (parsed.username || parsed.password) return "must not contain credentials";
  return undefined;
}

/** POST /proxies/{id}/check: an optional target; without one the configured default target is used. */
export const CheckProxyRequest = object({ url: text().superRefine(problemCheck(targetUrlProblem)).optional() });
export type CheckProxyRequest = z.output<typeof CheckProxyRequest>;
