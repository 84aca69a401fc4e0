import { file_hostagent_v1_host_agent } from "@browser-infra/contract";
import { type DescFile, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { Server } from "@grpc/grpc-js";
import { ReflectionService } from "@grpc/reflection";
import { service as healthService } from "grpc-health-check";

type PackageDefinition = ConstructorParameters<typeof ReflectionService>[0];

/** The file and everything it imports, each serialized once: what a reflection client asks for. */
function descriptorSet(file: DescFile, into = new Map<string, Uint8Array>()): Map<string, Uint8Array> {
  if (into.has(file.proto.name)) return into;
  into.set(file.proto.name, toBinary(FileDescriptorProtoSchema, file.proto));
  for (const dependency of file.dependencies) descriptorSet(dependency, into);
  return into;
}

/**
 * gRPC server reflection (v1 and v1alpha), so grpcurl can list and call the
 * agent without the .proto files. The HostAgent descriptors come from the
 * generated protobuf-es code, the same ones the server is built from, so
 * they cannot drift from what is served.
 */
export function addReflection(server: Server): void {
  const hostAgentFiles = [...descriptorSet(file_hostagent_v1_host_agent).values()].map((bytes) => Buffer.from(bytes));
  // @grpc/reflection reads only each entry's `fileDescriptorProtos`, as @grpc/proto-loader lays them out.
  const definition = {
    "hostagent.v1.HostAgent": { fileDescriptorProtos: hostAgentFiles },
    "grpc.health.v1.Health": { fileDescriptorProtos: healthService.Check?.requestType.fileDescriptorProtos ?? [] },
  } as unknown as PackageDefinition;
  new ReflectionService(definition).addToServer(server);
}
