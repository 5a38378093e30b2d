// The gRPC face of the admin API: infinity.memory.v1.MemoryAdmin and SkillAdmin over grpc-js,
// with paths and (de)serializers from the generated protobuf-es descriptors. Each call checks
// the token in the `authorization` metadata, turns the proto request into its JSON mapping and
// goes through the same validation and implementation as the HTTP mapping (dispatch.ts).
import { fromBinary, fromJson, toBinary, toJson, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import {
  Server,
  ServerCredentials,
  status,
  type MethodDefinition,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { Logger } from "pino";
import { callJson, PROTO_SERVICES, type Route } from "./dispatch.js";
import { ApiError, grpcStatusOf, toApiError } from "./errors.js";
import { bearerMatches } from "./token.js";

export interface AdminGrpcOptions {
  routes: Map<string, Route>;
  token: string;
  host: string;
  port: number;
  logger: Logger;
}

export interface AdminGrpcServer {
  address: string;
  port: number;
  close(opts?: { graceMs?: number }): Promise<void>;
}

// Wraps without copying: grpc-js wants a Buffer, protobuf-es hands out a Uint8Array.
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function methodDef(input: DescMessage, output: DescMessage, path: string, name: string): MethodDefinition<Message, Message> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: (msg) => asBuffer(toBinary(input, msg)),
    requestDeserialize: (buf) => fromBinary(input, buf),
    responseSerialize: (msg) => asBuffer(toBinary(output, msg)),
    responseDeserialize: (buf) => fromBinary(output, buf),
    originalName: name,
  };
}

/**
 * grpc-js definitions of both services, keyed by the proto method's localName (listMemories …),
 * for Server.addService and makeGenericClientConstructor (clients in tests and tools).
 */
export function adminServiceDefinitions(): Record<keyof typeof PROTO_SERVICES, ServiceDefinition> {
  const defs = {} as Record<keyof typeof PROTO_SERVICES, ServiceDefinition>;
  for (const [name, svc] of Object.entries(PROTO_SERVICES) as [keyof typeof PROTO_SERVICES, (typeof PROTO_SERVICES)[keyof typeof PROTO_SERVICES]][]) {
    const def: Record<string, MethodDefinition<Message, Message>> = {};
    for (const m of svc.methods) def[m.localName] = methodDef(m.input, m.output, `/${svc.typeName}/${m.name}`, m.localName);
    defs[name] = def;
  }
  return defs;
}

export async function startAdminGrpc(o: AdminGrpcOptions): Promise<AdminGrpcServer> {
  const server = new Server({ "grpc.max_receive_message_length": 1 << 20 });
  const defs = adminServiceDefinitions();
  for (const [name, svc] of Object.entries(PROTO_SERVICES) as [keyof typeof PROTO_SERVICES, (typeof PROTO_SERVICES)[keyof typeof PROTO_SERVICES]][]) {
    const impl: UntypedServiceImplementation = {};
    for (const m of svc.methods) {
      const route = o.routes.get(`${name}/${m.name}`);
      if (!route) throw new Error(`admin gRPC: no route for ${name}/${m.name}`);
      impl[m.localName] = (call: ServerUnaryCall<Message, Message>, callback: sendUnaryData<Message>) => {
        const auth = call.metadata.get("authorization")[0];
        if (!bearerMatches(typeof auth === "string" ? auth : auth?.toString("utf8"), o.token)) {
          callback({ code: status.UNAUTHENTICATED, details: "missing or wrong access token: send metadata `authorization: Bearer <token>` ($INFINITY_MEMORY_HOME/admin.token)" });
          return;
        }
        const started = performance.now();
        (async () => {
          const json = toJson(m.input, call.request) as JsonValue;
          const out = await callJson(route, json);
          return fromJson(m.output, out);
        })().then(
          (res) => {
            o.logger.debug({ method: `${name}/${m.name}`, ms: Math.round(performance.now() - started) }, "admin grpc");
            callback(null, res);
          },
          (e: unknown) => {
            const err = e instanceof ApiError ? e : toApiError(e);
            if (err.code === "internal") o.logger.error({ err: e, method: `${name}/${m.name}` }, "admin gRPC call failed");
            callback({ code: grpcStatusOf(err), details: err.field ? `${err.message} [field: ${err.field}]` : err.message });
          },
        );
      };
    }
    server.addService(defs[name], impl);
  }
  const hostPart = o.host.includes(":") ? `[${o.host}]` : o.host;
  const port = await new Promise<number>((done, fail) =>
    server.bindAsync(`${hostPart}:${o.port}`, ServerCredentials.createInsecure(), (err, p) => (err ? fail(err) : done(p))),
  );
  return {
    address: `${hostPart}:${port}`,
    port,
    close: ({ graceMs = 2000 } = {}) =>
      new Promise<void>((done) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          done();
        }, graceMs);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          done();
        });
      }),
  };
}
