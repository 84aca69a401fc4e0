import { spawnSync } from "node:child_process";

export interface SandboxDecision {
  sandbox: boolean;
  /** Why the sandbox is off; undefined when it is on. */
  reason: string | undefined;
}

/**
 * Whether Chromium can use its own sandbox here. Chromium refuses to start sandboxed as root, and
 * Debian's build sandboxes its renderers with unprivileged user namespaces, which some kernels and
 * container runtimes (Docker's default seccomp profile) deny. Asked once, at start-up, by trying
 * to make such a namespace.
 */
export function decideSandbox(): SandboxDecision {
  if (process.getuid?.() === 0) return { sandbox: false, reason: "the agent runs as root" };
  const probe = spawnSync("unshare", ["--user", "true"], { stdio: "ignore", timeout: 5_000 });
  if (probe.error) return { sandbox: false, reason: `cannot run unshare: ${probe.error.message}` };
  if (probe.status !== 0) return { sandbox: false, reason: "unprivileged user namespaces are not allowed here" };
  return { sandbox: true, reason: undefined };
}
