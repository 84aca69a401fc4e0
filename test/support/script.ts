import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";

export interface RunningScript {
  readonly child: ChildProcess;
  /** Resolves with the first stdout line that `match` accepts. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves when the script exits, with its exit code and everything it printed. */
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/**
 * Starts a helper script as its own process: `command` is the full argument vector, such as
 * `[process.execPath, "script.ts"]` or `["ip", "netns", "exec", ns, process.execPath, "script.ts"]`.
 */
export function startScript(command: string[], env: NodeJS.ProcessEnv): RunningScript {
  const [file, ...args] = command as [string, ...string[]];
  const child = spawn(file, args, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    for (const listener of listeners) listener();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const done = once(child, "exit").then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return {
    child,
    done,
    waitForLine: (match, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const line = stdout.split("\n").find(match);
          if (line === undefined) return;
          stop();
          resolve(line);
        };
        const timer = setTimeout(() => {
          stop();
          reject(new Error(`${command.join(" ")}: no matching line within ${timeoutMs} ms; stderr: ${stderr}`));
        }, timeoutMs);
        const stop = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void done.then(() => {
          if (!listeners.has(check)) return;
          stop();
          reject(new Error(`${command.join(" ")} exited first; stdout: ${stdout.slice(-2000)} stderr: ${stderr}`));
        });
        check();
      }),
  };
}
