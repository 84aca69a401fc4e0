// node bench/fleet-simulator.ts <hosts> [--start-delay-ms=N]
// A fleet of simulated host agents in one process: one gRPC server listening on <hosts> loopback
// ports, each port one agent with a slot of its own. It answers what gateways ask of agents
// (grpc.health.v1 Check, Describe, StartSession after a delay, StopSession, WaitSessionEnd, and the
// UDP liveness probes) the way a real agent does, and nothing else (UNIMPLEMENTED). Used by B10 and by the fleet test.
//
// Protocol: stdout is one JSON line {"addresses": [...]} once every port listens, then one line per
// command done; stdin takes commands, one per line:
//   kill <address>      the agent dies: its port is closed and its connections cut
//   stats               {"starts": n, "stops": n, "doubleStarts": n}: doubleStarts counts a start
//                       for an agent that runs another session (never happens with a sound gateway)
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type DescribeResponseSchema,
  HostAgent,
  type StartSessionRequest,
  type StartSessionResponseSchema,
  type StopSessionRequest,
  serviceDefinition,
  stateVersion,
  type WaitSessionEndRequest,
} from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { type ProbeResponder, startProbeResponder } from "../packages/host-agent/src/liveness/probe-responder.ts";

const hostCount = Number(process.argv[2]);
const startDelayMs = Number(process.argv.find((a) => a.startsWith("--start-delay-ms="))?.slice(17) ?? 0);
if (!Number.isInteger(hostCount) || hostCount < 1) {
  process.stderr.write("usage: node bench/fleet-simulator.ts <hosts> [--start-delay-ms=N]\n");
  process.exit(2);
}

interface Agent {
  instance: string;
  sessionId: string;
  /** Answers the gateways' liveness probes on the agent's port number (UDP), as the real agent does. */
  probes: ProbeResponder;
  /** Sessions stopped here, and why: a late start of one is refused, as the real slot does. */
  ended: Set<string>;
}

const agents = new Map<string, Agent>();
const counts = { starts: 0, stops: 0, doubleStarts: 0 };

function agentOf(call: ServerUnaryCall<unknown, unknown>): Agent {
  const agent = agents.get(call.getHost());
  if (!agent) throw Object.assign(new Error(`no agent at ${call.getHost()}`), { code: status.UNAVAILABLE });
  return agent;
}

/** A unary handler from an async function; an error with a gRPC code ends the call with it. */
function unary<Req, Res>(handle: (request: Req, agent: Agent) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    let agent: Agent;
    try {
      agent = agentOf(call as ServerUnaryCall<unknown, unknown>);
    } catch (error) {
      callback(error as ServiceError);
      return;
    }
    handle(call.request, agent).then(
      (response) => callback(null, response),
      (error: ServiceError) => callback({ ...error, code: error.code ?? status.INTERNAL, details: error.message }),
    );
  };
}

const failure = (code: status, message: string) => Object.assign(new Error(message), { code });

const server = new Server();
server.addService(serviceDefinition(HostAgent), {
  Describe: unary<unknown, MessageInitShape<typeof DescribeResponseSchema>>(async (_request, agent) => ({
    agentVersion: "fleet-simulator",
    display: ":0",
    screenWidth: 1280,
    screenHeight: 800,
    hasBrowser: true,
    sessionId: agent.sessionId,
    agentInstance: agent.instance,
  })),
  StartSession: unary<StartSessionRequest, MessageInitShape<typeof StartSessionResponseSchema>>(
    async (request, agent) => {
      if (agent.ended.has(request.sessionId)) throw failure(status.ABORTED, "the session was stopped already");
      if (agent.sessionId !== "" && agent.sessionId !== request.sessionId) {
        counts.doubleStarts++;
        throw failure(status.FAILED_PRECONDITION, `the host is running another session (${agent.sessionId})`);
      }
      if (agent.sessionId === "") counts.starts++;
      agent.sessionId = request.sessionId;
      if (startDelayMs > 0) await sleep(startDelayMs);
      return {
        cdpWsUrl: "ws://127.0.0.1:9/devtools/browser/simulated",
        headless: false,
        viewportWidth: 1280,
        viewportHeight: 800,
        agentInstance: agent.instance,
      };
    },
  ),
  StopSession: unary<StopSessionRequest, { wasRunning: boolean }>(async (request, agent) => {
    agent.ended.add(request.sessionId);
    if (agent.sessionId !== request.sessionId) return { wasRunning: false };
    agent.sessionId = "";
    counts.stops++;
    return { wasRunning: true };
  }),
  WaitSessionEnd: unary<WaitSessionEndRequest, { reason: string; agentInstance: string }>(async (request, agent) => {
    // Held open like the real agent's, until the session stops (or the caller's deadline).
    while (agent.sessionId === request.sessionId) await sleep(200);
    return { reason: agent.ended.has(request.sessionId) ? "stopped" : "not running", agentInstance: agent.instance };
  }),
});
// Every simulated agent serves; a dead one is not there at all (its port is closed).
new HealthImplementation({ "": "SERVING", "hostagent.v1.HostAgent": "SERVING" }).addToServer(server);

const addresses: string[] = [];
for (let i = 0; i < hostCount; i++) {
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  const address = `127.0.0.1:${port}`;
  const agent: Agent = { instance: randomUUID(), sessionId: "", ended: new Set(), probes: undefined as never };
  agent.probes = await startProbeResponder("127.0.0.1", port, () => ({
    status: "serving",
    version: stateVersion(agent.instance, agent.sessionId),
  }));
  agents.set(address, agent);
  addresses.push(address);
}
process.stdout.write(`${JSON.stringify({ addresses })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument = ""] = line.trim().split(/\s+/);
  const killed = command === "kill" ? agents.get(argument) : undefined;
  if (killed) {
    agents.delete(argument);
    await killed.probes.close();
    const port = argument.slice(argument.lastIndexOf(":") + 1);
    server.drain(`127.0.0.1:${port}`, 0);
    server.unbind(`127.0.0.1:${port}`);
    process.stdout.write(`${JSON.stringify({ killed: argument })}\n`);
  } else if (command === "stats") {
    process.stdout.write(`${JSON.stringify(counts)}\n`);
  } else {
    process.stdout.write(`${JSON.stringify({ error: `unknown command: ${line}` })}\n`);
  }
}
server.forceShutdown();
