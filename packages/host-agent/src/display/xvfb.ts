import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { MARKER_VARIABLE } from "../browser/processes.ts";
import type { KeyboardLayout } from "../config.ts";

export interface OwnXvfb {
  /** The DISPLAY value, such as ":3". */
  display: string;
  /** The X authority file with the display's cookie: only processes given it (XAUTHORITY) may connect. */
  xauthority: string;
  /** Resolves when Xvfb exits, with how. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 10_000;

/**
 * A new X authority file holding one MIT-MAGIC-COOKIE-1 for any display and address (family Wild,
 * empty display number): the display number is known only once Xvfb picked it.
 */
function writeXauthority(path: string): void {
  const field = (value: Buffer) => {
    const length = Buffer.alloc(2);
    length.writeUInt16BE(value.length);
    return Buffer.concat([length, value]);
  };
  const entry = Buffer.concat([
    Buffer.from([0xff, 0xff]),
    field(Buffer.alloc(0)),
    field(Buffer.alloc(0)),
    field(Buffer.from("MIT-MAGIC-COOKIE-1")),
    field(randomBytes(16)),
  ]);
  writeFileSync(path, entry, { mode: 0o600 });
}

/**
 * Starts an Xvfb of the agent's own on a free display (Xvfb picks it: -displayfd), with the data
 * directory's marker so that a later agent kills it if this one dies without stopping it. It
 * admits only clients with its cookie: an X server also listens on an abstract socket, which no
 * file permission or private /tmp protects, so without one any local process (another agent's
 * browser, say) could connect to this display and type into it.
 */
export async function startOwnXvfb(screen: string, dataDir: string, keyboardLayout?: KeyboardLayout): Promise<OwnXvfb> {
  const xauthority = join(dataDir, "Xauthority");
  writeXauthority(xauthority);
  // -noreset: the server would otherwise reset whenever its last client leaves, between two sessions.
  const args = ["-displayfd", "3", "-screen", "0", screen, "-nolisten", "tcp", "-noreset", "-auth", xauthority];
  const child: ChildProcess = spawn("Xvfb", args, {
    stdio: ["ignore", "ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH, [MARKER_VARIABLE]: dataDir },
  });
  const stderr: string[] = [];
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr.push(chunk.toString("utf8"));
    if (stderr.length > 20) stderr.shift();
  });
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    child.once("error", (error) => resolve(`could not be started: ${error.message}`));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) child.kill("SIGTERM");
    await exited;
  };
  try {
    const number = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Xvfb did not start within ${STARTUP_TIMEOUT_MS} ms`)),
        STARTUP_TIMEOUT_MS,
      );
      void exited.then((how) => {
        clearTimeout(timer);
        const hint = how.startsWith("could not")
          ? " (Debian/Ubuntu: apt-get install xvfb, or run scripts/setup.sh)"
          : "";
        reject(new Error(`Xvfb ${how}${hint}: ${stderr.join("").trim()}`));
      });
      readDisplayNumber(child.stdio[3] as Readable).then((value) => {
        clearTimeout(timer);
        resolve(value);
      }, reject);
    });
    if (keyboardLayout) await setKeyboardLayout(`:${number}`, xauthority, keyboardLayout);
    return { display: `:${number}`, xauthority, exited, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Sets the display's XKB layout with setxkbmap, before any other client connects: the keyboard map every
 * client reads is the layout's from the start. It lasts because the server runs with -noreset (a reset,
 * when the last client leaves, would bring back the default layout).
 */
async function setKeyboardLayout(display: string, xauthority: string, keyboard: KeyboardLayout): Promise<void> {
  const args = ["-display", display, "-layout", keyboard.layout];
  if (keyboard.variant) args.push("-variant", keyboard.variant);
  const child = spawn("setxkbmap", args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH, XAUTHORITY: xauthority },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const how = await new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code === 0 ? "" : `exited with ${signal ?? `code ${code}`}`));
    child.once("error", (error) =>
      resolve(`could not be started: ${error.message} (Debian/Ubuntu: apt-get install x11-xkb-utils)`),
    );
  });
  if (how !== "") throw new Error(`setxkbmap ${args.join(" ")} ${how}: ${stderr.trim()}`);
}

/** Xvfb writes its display number and a newline to the -displayfd pipe once it accepts connections. */
export async function readDisplayNumber(pipe: Readable): Promise<number> {
  let text = "";
  for await (const chunk of pipe) {
    text += (chunk as Buffer).toString("utf8");
    if (text.includes("\n")) return Number.parseInt(text, 10);
  }
  throw new Error("Xvfb closed the -displayfd pipe without naming its display");
}
