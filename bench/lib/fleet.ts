import { type ChildProcess, spawn } from "node:child_process";
import { createInterface, type Interface } from "node:readline";
import { fileURLToPath } from "node:url";

const SIMULATOR = fileURLToPath(new URL("../fleet-simulator.ts", import.meta.url));

export interface FleetStats {
  starts: number;
  stops: number;
  /** Starts for an agent that ran another session: a gateway gave one host to two sessions. */
  doubleStarts: number;
}

/** A running fleet simulator (bench/fleet-simulator.ts) and its commands. */
export class SimulatedFleet {
  readonly addresses: string[];
  readonly #child: ChildProcess;
  readonly #lines: AsyncIterator<string>;
  readonly #reader: Interface;

  private constructor(child: ChildProcess, reader: Interface, lines: AsyncIterator<string>, addresses: string[]) {
    this.#child = child;
    this.#reader = reader;
    this.#lines = lines;
    this.addresses = addresses;
  }

  /** Starts `hosts` simulated agents; StartSession answers after `startDelayMs`. */
  static async start(hosts: number, startDelayMs = 0): Promise<SimulatedFleet> {
    const child = spawn(process.execPath, [SIMULATOR, String(hosts), `--start-delay-ms=${startDelayMs}`], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const reader = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
    const lines = reader[Symbol.asyncIterator]();
    const first = await lines.next();
    if (first.done) throw new Error("the fleet simulator exited before it listened");
    const { addresses } = JSON.parse(first.value) as { addresses: string[] };
    return new SimulatedFleet(child, reader, lines, addresses);
  }

  get pid(): number {
    return this.#child.pid as number;
  }

  async #command<T>(line: string): Promise<T> {
    this.#child.stdin?.write(`${line}\n`);
    const answer = await this.#lines.next();
    if (answer.done) throw new Error("the fleet simulator exited");
    return JSON.parse(answer.value) as T;
  }

  /** The agent at `address` dies: its port closes and its connections are cut. */
  async kill(address: string): Promise<void> {
    await this.#command(`kill ${address}`);
  }

  stats(): Promise<FleetStats> {
    return this.#command<FleetStats>("stats");
  }

  async stop(): Promise<void> {
    this.#reader.close();
    this.#child.kill("SIGKILL");
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      await new Promise((resolve) => this.#child.once("exit", resolve));
    }
  }
}
