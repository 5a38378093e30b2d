// The ContextHook service as grpc-js sees it: paths and (de)serializers derived from the
// generated protobuf-es descriptors (proto/gen), so the wire names cannot drift from the .proto.
// No server logic here; server.ts serves it and clients (tests, tools) call through it.
import { create, fromBinary, toBinary, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";
import type {
  handleUnaryCall,
  MethodDefinition,
  ServiceDefinition,
  UntypedServiceImplementation,
} from "@grpc/grpc-js";
import {
  ContextHook,
  type BuildPrefixRequest,
  type BuildPrefixResponse,
  type RecordTurnRequest,
  type RecordTurnResponse,
} from "../../proto/gen/infinity/memory/v1/context_hook_pb.js";

type UnaryDesc<I extends DescMessage, O extends DescMessage> = DescMethod & {
  methodKind: "unary";
  input: I;
  output: O;
};

// Wraps without copying: grpc-js wants a Buffer, protobuf-es hands out a Uint8Array.
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Set on a request whose bytes are not a valid message of the method's input type. grpc-js
 * answers a throwing deserializer with INTERNAL; bad bytes are the caller's fault, so the handler
 * sees this marker instead and answers INVALID_ARGUMENT with what did not decode.
 */
export const DECODE_ERROR: unique symbol = Symbol("grpc request decode error");

export function decodeErrorOf(request: unknown): string | null {
  const v = (request as { [DECODE_ERROR]?: unknown } | null)?.[DECODE_ERROR];
  return typeof v === "string" ? v : null;
}

function decodeOrMark<I extends DescMessage>(schema: I, buf: Buffer): MessageShape<I> {
  try {
    return fromBinary(schema, buf);
  } catch (e) {
    return Object.assign(create(schema), { [DECODE_ERROR]: e instanceof Error ? e.message : String(e) });
  }
}

function unaryMethod<I extends DescMessage, O extends DescMessage>(
  m: UnaryDesc<I, O>,
): MethodDefinition<MessageShape<I>, MessageShape<O>> {
  return {
    // The HTTP/2 path every gRPC implementation (tonic included) derives from the .proto.
    path: `/${m.parent.typeName}/${m.name}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: (msg) => asBuffer(toBinary(m.input, msg)),
    requestDeserialize: (buf) => decodeOrMark(m.input, buf),
    responseSerialize: (msg) => asBuffer(toBinary(m.output, msg)),
    responseDeserialize: (buf) => fromBinary(m.output, buf),
    originalName: m.localName,
  };
}

export interface ContextHookHandlers extends UntypedServiceImplementation {
  buildPrefix: handleUnaryCall<BuildPrefixRequest, BuildPrefixResponse>;
  recordTurn: handleUnaryCall<RecordTurnRequest, RecordTurnResponse>;
}

/** grpc-js definition of infinity.memory.v1.ContextHook, for Server.addService and makeGenericClientConstructor. */
export const contextHookService = {
  buildPrefix: unaryMethod(ContextHook.method.buildPrefix),
  recordTurn: unaryMethod(ContextHook.method.recordTurn),
} satisfies ServiceDefinition<ContextHookHandlers>;
