import { z } from "zod";
import { PROXY_PROTOCOLS, PROXY_STATUSES, PROXY_TYPES, type ProxyRecord } from "../store/proxies.ts";

export const CountryConfigJson = z.object({ country: z.string() });

export const ResidentialConfigJson = z.object({
  asn: z.string().optional(),
  city: z.string().optional(),
  country: z.string().optional(),
  state: z.string().optional(),
  zip: z.string().optional(),
  os: z.enum(["windows", "macos", "android"]).optional(),
});

export const MobileConfigJson = z.object({
  city: z.string().optional(),
  country: z.string().optional(),
  state: z.string().optional(),
});

/** A custom proxy's secrets show only as has_password and has_ca_bundle. */
export const CustomConfigJson = z.object({
  host: z.string(),
  port: z.number().int(),
  username: z.string().optional(),
  has_password: z.boolean(),
  has_ca_bundle: z.boolean(),
});

/** Spec 2.1, field for field. status, ip_address and last_checked appear once a health check has set them. */
export const ProxyJson = z.object({
  type: z.enum(PROXY_TYPES),
  id: z.string(),
  name: z.string(),
  protocol: z.enum(PROXY_PROTOCOLS),
  status: z.enum(PROXY_STATUSES).optional(),
  ip_address: z.string().optional(),
  last_checked: z.iso.datetime().optional(),
  bypass_hosts: z.array(z.string()),
  config: z.union([CountryConfigJson, ResidentialConfigJson, MobileConfigJson, CustomConfigJson]),
});
export type ProxyJson = z.infer<typeof ProxyJson>;

function configJson(record: ProxyRecord): ProxyJson["config"] {
  if (record.type !== "custom") return record.config as ProxyJson["config"];
  return {
    ...(record.config as { host: string; port: number; username?: string }),
    has_password: record.passwordSealed !== null,
    has_ca_bundle: record.caBundleSealed !== null,
  };
}

export function toProxyJson(record: ProxyRecord): ProxyJson {
  return {
    type: record.type,
    id: record.id,
    name: record.name,
    protocol: record.protocol,
    ...(record.status === null ? {} : { status: record.status }),
    ...(record.ipAddress === null ? {} : { ip_address: record.ipAddress }),
    ...(record.lastChecked === null ? {} : { last_checked: record.lastChecked }),
    bypass_hosts: record.bypassHosts,
    config: configJson(record),
  };
}
