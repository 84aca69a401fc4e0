import { X509Certificate } from "node:crypto";
import { accessSync, constants, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createSecureContext } from "node:tls";

export interface AgentConfig {
  /**
   * host:port the gRPC server listens on, or unix:/absolute/path for a Unix socket (whoever may
   * open the socket may call the agent: put it in a directory only the gateway's user can enter).
   */
  listen: string;
  /** X display to press keys on; undefined when the host has none. */
  display: string | undefined;
  logLevel: string;
  tls: { cert: Buffer; key: Buffer; clientCa: Buffer | undefined } | undefined;
  /** host:port of the Prometheus /metrics listener; undefined when turned off. */
  metricsListen: string | undefined;
  /** The Chromium binary launched for each session; undefined: this host runs no browser. */
  chromiumPath: string | undefined;
  /** Absolute path of the directory this agent owns: every browser's profile, downloads, HOME and TMPDIR. */
  dataDir: string;
  /** Screen of the Xvfb the agent starts itself, such as "1920x1080x24"; undefined: use DISPLAY, or none. */
  xvfbScreen: string | undefined;
  /** The longest press_key duration the agent accepts. */
  maxPressDurationMs: number;
  /** How many presses may wait behind the running one. */
  maxQueuedPresses: number;
  /** How long a stopping agent waits for its running session to end before ending it; 0: at once. */
  drainTimeoutMs: number;
  /** XKB layout (and variant) set on the agent's own Xvfb, such as { layout: "de" }; undefined: the server's default (us). */
  keyboardLayout: KeyboardLayout | undefined;
}

export interface KeyboardLayout {
  layout: string;
  variant: string | undefined;
}

/** A configuration problem: the process prints it as one line and exits. */
export class ConfigError extends Error {}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function readFile(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${path}: ${(error as Error).message}`);
  }
}

/** host:port, an IPv6 host in brackets, the port from 0 (any free one) to 65535. */
const HOST_PORT =
  /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(6553[0-5]|655[0-2]\d|65[0-4]\d\d|6[0-4]\d{3}|[1-5]\d{4}|[1-9]\d{0,3}|0)$/;
const UNIX_SOCKET = /^unix:\/\S+$/;
const XVFB_SCREEN = /^[1-9]\d{2,4}x[1-9]\d{2,4}x(8|15|16|24|30)$/;
export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium";
/** An XKB layout name with an optional variant in parentheses: "de", "fr(azerty)", "us(intl)". */
const KEYBOARD_LAYOUT = /^([A-Za-z0-9_-]+)(?:\(([A-Za-z0-9_-]+)\))?$/;
export const XKB_SYMBOLS_DIR = "/usr/share/X11/xkb/symbols";

/** A whole number of at least min (1: "positive"), or fallback when unset. */
function wholeNumber(env: NodeJS.ProcessEnv, variable: string, fallback: number, min: 0 | 1): number {
  const raw = env[variable];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min) {
    throw new ConfigError(`${variable} must be a ${min === 1 ? "positive " : ""}whole number, got "${raw}"`);
  }
  return value;
}

/** The browser binary, checked now so that a host without Chromium says so at start, not at the first session. */
function chromiumPath(env: NodeJS.ProcessEnv): string | undefined {
  const path = env.AGENT_CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
  if (path === "none") return undefined;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new ConfigError(
      `no Chromium at ${path}: install it (Debian/Ubuntu: apt-get install chromium, or run scripts/setup.sh), ` +
        "set AGENT_CHROMIUM_PATH to its binary, or AGENT_CHROMIUM_PATH=none for a host without a browser",
    );
  }
  return path;
}

/**
 * AGENT_KEYBOARD_LAYOUT, checked against the XKB data now: a misspelt layout is a setting to fix, and
 * setxkbmap would otherwise fail only once Xvfb runs.
 */
function keyboardLayout(env: NodeJS.ProcessEnv, xvfbScreen: string | undefined): KeyboardLayout | undefined {
  const raw = env.AGENT_KEYBOARD_LAYOUT;
  if (raw === undefined || raw === "") return undefined;
  const match = KEYBOARD_LAYOUT.exec(raw);
  if (!match) {
    throw new ConfigError(
      `AGENT_KEYBOARD_LAYOUT must be an XKB layout such as de or fr(azerty) (letters, digits, _ and -), got "${raw}"`,
    );
  }
  if (xvfbScreen === undefined) {
    throw new ConfigError("AGENT_KEYBOARD_LAYOUT applies to the agent's own display: set AGENT_XVFB as well");
  }
  const [, layout = "", variant] = match;
  let symbols: string;
  try {
    symbols = readFileSync(`${XKB_SYMBOLS_DIR}/${layout}`, "utf8");
  } catch {
    throw new ConfigError(
      `AGENT_KEYBOARD_LAYOUT: no XKB layout "${layout}" in ${XKB_SYMBOLS_DIR} ` +
        "(Debian/Ubuntu: apt-get install xkb-data x11-xkb-utils, or run scripts/setup.sh)",
    );
  }
  if (variant !== undefined && !symbols.includes(`xkb_symbols "${variant}"`)) {
    throw new ConfigError(`AGENT_KEYBOARD_LAYOUT: the XKB layout "${layout}" has no variant "${variant}"`);
  }
  return { layout, variant };
}

/** The TLS files, parsed now: a bad one is a setting to fix, not a failure to listen to retry. */
function checkedTls(tls: NonNullable<AgentConfig["tls"]>): NonNullable<AgentConfig["tls"]> {
  try {
    createSecureContext({ cert: tls.cert, key: tls.key });
  } catch (error) {
    throw new ConfigError(
      `AGENT_TLS_CERT and AGENT_TLS_KEY are not a PEM certificate and its key: ${(error as Error).message}`,
    );
  }
  if (tls.clientCa) {
    try {
      new X509Certificate(tls.clientCa);
    } catch (error) {
      throw new ConfigError(`AGENT_TLS_CLIENT_CA holds no PEM certificate: ${(error as Error).message}`);
    }
  }
  return tls;
}

export function loadConfig(env: NodeJS.ProcessEnv): AgentConfig {
  const listen = env.AGENT_LISTEN || "127.0.0.1:50051";
  if (!HOST_PORT.test(listen) && !UNIX_SOCKET.test(listen)) {
    throw new ConfigError(`AGENT_LISTEN must be host:port or unix:/absolute/path, got "${listen}"`);
  }
  const metricsListen = env.AGENT_METRICS_LISTEN || "127.0.0.1:9464";
  if (metricsListen !== "off" && !HOST_PORT.test(metricsListen)) {
    throw new ConfigError(`AGENT_METRICS_LISTEN must be host:port or off, got "${metricsListen}"`);
  }
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  const certPath = env.AGENT_TLS_CERT;
  const keyPath = env.AGENT_TLS_KEY;
  if (Boolean(certPath) !== Boolean(keyPath)) {
    throw new ConfigError("AGENT_TLS_CERT and AGENT_TLS_KEY must be set together");
  }
  const clientCaPath = env.AGENT_TLS_CLIENT_CA;
  if (clientCaPath && !certPath) throw new ConfigError("AGENT_TLS_CLIENT_CA needs AGENT_TLS_CERT and AGENT_TLS_KEY");
  const tls =
    certPath && keyPath
      ? checkedTls({
          cert: readFile("AGENT_TLS_CERT", certPath),
          key: readFile("AGENT_TLS_KEY", keyPath),
          clientCa: clientCaPath ? readFile("AGENT_TLS_CLIENT_CA", clientCaPath) : undefined,
        })
      : undefined;
  const xvfbScreen = env.AGENT_XVFB || undefined;
  if (xvfbScreen !== undefined && !XVFB_SCREEN.test(xvfbScreen)) {
    throw new ConfigError(`AGENT_XVFB must be a screen such as 1920x1080x24, got "${xvfbScreen}"`);
  }
  if (xvfbScreen !== undefined && env.DISPLAY) {
    throw new ConfigError(
      "AGENT_XVFB starts a display of the agent's own: unset DISPLAY, or unset AGENT_XVFB to use it",
    );
  }
  return {
    listen,
    display: env.DISPLAY || undefined,
    logLevel,
    tls,
    metricsListen: metricsListen === "off" ? undefined : metricsListen,
    chromiumPath: chromiumPath(env),
    // systemd's StateDirectory= sets STATE_DIRECTORY; elsewhere a folder beside the working directory.
    dataDir: resolve(env.AGENT_DATA_DIR || env.STATE_DIRECTORY || "./data/host-agent"),
    xvfbScreen,
    maxPressDurationMs: wholeNumber(env, "AGENT_MAX_PRESS_DURATION_MS", 300_000, 1),
    maxQueuedPresses: wholeNumber(env, "AGENT_MAX_QUEUED_PRESSES", 32, 1),
    // 0 by default: under systemd (TimeoutStopSec=15s) and Docker (10 s before SIGKILL) there is
    // no time to wait; Kubernetes' manifests give a grace period and set it.
    drainTimeoutMs: wholeNumber(env, "AGENT_DRAIN_TIMEOUT_MS", 0, 0),
    keyboardLayout: keyboardLayout(env, xvfbScreen),
  };
}
