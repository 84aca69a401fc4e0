import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, createFileRegistry, type DescMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { type Client, credentials, loadPackageDefinition, Metadata } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentProcess, startAgent } from "../support/processes.ts";

interface ReflectionResponse {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

type ReflectionClient = Client & {
  serverReflectionInfo(metadata: Metadata): NodeJS.ReadWriteStream & {
    write(request: Record<string, string>): boolean;
  };
};

// The reflection protocol's own .proto, as shipped with the server implementation the agent uses.
const hostAgentRequire = createRequire(
  fileURLToPath(new URL("../../packages/host-agent/package.json", import.meta.url)),
);
const REFLECTION_PROTO = join(
  dirname(hostAgentRequire.resolve("@grpc/reflection")),
  "../proto/grpc/reflection/v1/reflection.proto",
);

let agent: AgentProcess;
let reflection: ReflectionClient;

beforeAll(async () => {
  agent = await startAgent();
  const definition = loadPackageDefinition(loadSync(REFLECTION_PROTO, { keepCase: false, defaults: true }));
  const ServerReflection = (
    definition.grpc as unknown as {
      reflection: { v1: { ServerReflection: new (address: string, creds: unknown) => ReflectionClient } };
    }
  ).reflection.v1.ServerReflection;
  reflection = new ServerReflection(agent.address, credentials.createInsecure());
});

afterAll(async () => {
  reflection?.close();
  await agent?.stop();
});

/** One request on the bidirectional reflection stream, as grpcurl sends them. */
function ask(request: Record<string, string>): Promise<ReflectionResponse> {
  return new Promise((resolve, reject) => {
    const stream = reflection.serverReflectionInfo(new Metadata());
    stream.once("data", (response: ReflectionResponse) => {
      stream.end();
      resolve(response);
    });
    stream.once("error", reject);
    stream.write(request);
  });
}

/** Every file a reflection client needs for `symbol`: its own and, transitively, those it imports. */
async function descriptorsFor(symbol: string) {
  const response = await ask({ fileContainingSymbol: symbol });
  if (!response.fileDescriptorResponse) throw new Error(`no descriptors: ${JSON.stringify(response.errorResponse)}`);
  const files = response.fileDescriptorResponse.fileDescriptorProto.map((bytes) =>
    fromBinary(FileDescriptorProtoSchema, bytes),
  );
  const known = new Set(files.map((file) => file.name));
  for (const file of [...files]) {
    for (const dependency of file.dependency) {
      if (known.has(dependency)) continue;
      const more = await ask({ fileByFilename: dependency });
      for (const bytes of more.fileDescriptorResponse?.fileDescriptorProto ?? []) {
        const dependencyFile = fromBinary(FileDescriptorProtoSchema, bytes);
        if (!known.has(dependencyFile.name)) files.push(dependencyFile);
        known.add(dependencyFile.name);
      }
    }
  }
  return files;
}

describe("gRPC server reflection on the host agent", () => {
  it("lists hostagent.v1.HostAgent among its services", async () => {
    const response = await ask({ listServices: "" });
    const names = response.listServicesResponse?.service.map((service) => service.name) ?? [];
    expect(names).toContain("hostagent.v1.HostAgent");
    expect(names).toContain("grpc.health.v1.Health");
  });

  it("describes HostAgent's methods from the file that declares it", async () => {
    const files = await descriptorsFor("hostagent.v1.HostAgent");
    const declaring = files.find((file) => file.name === "hostagent/v1/host_agent.proto");
    expect(declaring?.service.map((service) => service.name)).toEqual(["HostAgent"]);
    expect(declaring?.service[0]?.method.map((method) => method.name)).toEqual([
      "StartSession",
      "StopSession",
      "WaitSessionEnd",
      "FileInfo",
      "PressKey",
      "Describe",
      "Cdp",
      "CaptureScreenshot",
      "MoveMouse",
      "ClickMouse",
      "DragMouse",
      "Scroll",
      "GetMousePosition",
      "TypeText",
      "ListFiles",
      "ReadFile",
      "WriteFile",
      "DeleteFile",
      "DeleteDirectory",
      "CreateDirectory",
      "MoveFile",
    ]);
  });

  it("answers calls built from the reflected descriptors alone, as grpcurl does", async () => {
    // Dependencies first: a registry resolves each file's imports from the files before it.
    const files = (await descriptorsFor("hostagent.v1.HostAgent")).reverse();
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: files }));
    const call = (name: string, input: Record<string, unknown>) => {
      const method = registry.getService("hostagent.v1.HostAgent")?.methods.find((m) => m.name === name);
      if (!method) throw new Error(`${name} is not in the reflected descriptors`);
      return new Promise<Record<string, unknown>>((resolve, reject) => {
        reflection.makeUnaryRequest(
          `/hostagent.v1.HostAgent/${name}`,
          (message: unknown) => Buffer.from(toBinary(method.input, message as never)),
          (bytes: Buffer) => fromBinary(method.output as DescMessage, bytes) as unknown as Record<string, unknown>,
          create(method.input, input as never),
          new Metadata(),
          { deadline: Date.now() + 5_000 },
          (error, value) => (error || !value ? reject(error) : resolve(value)),
        );
      });
    };
    // File calls belong to the session the agent runs.
    await call("StartSession", { sessionId: "reflected" });
    const response = await call("FileInfo", { sessionId: "reflected", path: "/tmp" });
    expect(response).toMatchObject({ name: "tmp", path: "/tmp", isDir: true, mode: "drwxrwxrwt" });
    await call("StopSession", { sessionId: "reflected" });
  });
});
