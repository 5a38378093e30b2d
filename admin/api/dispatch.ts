// The seam both transports share: route name → (zod request schema, proto descriptors, handler).
// A call is validated with the contract's schema, answered by the one implementation
// (service.ts), and its result passed through the proto message so both transports answer
// exactly the protobuf JSON mapping of admin.proto.
import { fromJson, toJson, type DescMessage, type DescMethod, type JsonValue } from "@bufbuild/protobuf";
import type { z } from "zod";
import { MemoryAdmin, SkillAdmin } from "../../proto/gen/infinity/memory/v1/admin_pb.js";
import { ROUTES } from "./contract.js";
import { firstBadCharacter } from "../../core/bad-characters.js";
import { ApiError, fromZod } from "./errors.js";
import type { AdminHandlers } from "./service.js";
import { safeParseWire } from "../../toolsets/rap/safe-parse.js";

export interface Route {
  service: "MemoryAdmin" | "SkillAdmin";
  method: string;
  desc: DescMethod & { input: DescMessage; output: DescMessage };
  request: z.ZodType;
  handler: (req: unknown) => Promise<unknown>;
}

export const PROTO_SERVICES = { MemoryAdmin, SkillAdmin } as const;

/** Every route, keyed "Service/Method"; throws at start-up if contract and proto disagree on names. */
export function routesOf(handlers: AdminHandlers): Map<string, Route> {
  const out = new Map<string, Route>();
  for (const service of ["MemoryAdmin", "SkillAdmin"] as const) {
    const methods = ROUTES[service] as Record<string, { request: z.ZodType }>;
    const impl = handlers[service] as Record<string, (req: unknown) => Promise<unknown>>;
    const descs = new Map(PROTO_SERVICES[service].methods.map((m) => [m.name, m]));
    for (const [method, { request }] of Object.entries(methods)) {
      const desc = descs.get(method);
      const handler = impl[method];
      if (!desc || desc.methodKind !== "unary" || !handler) throw new Error(`admin API: ${service}/${method} is in the contract but not in admin.proto or the service`);
      out.set(`${service}/${method}`, { service, method, desc: desc as Route["desc"], request, handler: handler.bind(impl) });
    }
    if (descs.size !== Object.keys(methods).length) throw new Error(`admin API: ${service} in admin.proto and contract.ts list different methods`);
  }
  return out;
}

/** Validate `body` (parsed JSON) against the route's contract schema, call it, answer proto JSON. */
export async function callJson(route: Route, body: unknown): Promise<JsonValue> {
  const parsed = safeParseWire(route.request, body);
  if (!parsed.success) throw fromZod(parsed.error, `${route.method} request`);
  const bad = firstBadCharacter(body);
  if (bad !== null) {
    const field = bad.path.map(String).join(".") || "request";
    throw new ApiError("invalid_argument", `"${field}" holds ${bad.what}; remove it`, field);
  }
  const result = await route.handler(parsed.data);
  return normalize(route.desc.output, result);
}

/** Contract JSON → the proto message → protobuf JSON with every implicit field present. */
export function normalize(desc: DescMessage, result: unknown): JsonValue {
  // JSON round trip drops `undefined` (absent optional fields), which fromJson would refuse
  const plain = JSON.parse(JSON.stringify(result)) as JsonValue;
  return toJson(desc, fromJson(desc, plain), { alwaysEmitImplicit: true });
}
