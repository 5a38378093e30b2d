// The zod contract (what the page and the HTTP mapping use) and admin.proto (what gRPC uses)
// describe the same messages: same routes, same JSON field names, same nesting. A field added to
// one and not the other fails here before it confuses a client.
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { ROUTES } from "../../admin/api/contract.js";
import { PROTO_SERVICES } from "../../admin/api/dispatch.js";

type Def = { type: string; innerType?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType> };
const defOf = (s: z.ZodType) => (s as unknown as { def: Def }).def;

/** Strip optional/nullable/default wrappers and arrays down to the element schema. */
function unwrap(s: z.ZodType): z.ZodType {
  let cur = s;
  for (;;) {
    const d = defOf(cur);
    if ((d.type === "optional" || d.type === "nullable" || d.type === "default") && d.innerType) cur = d.innerType;
    else if (d.type === "array" && d.element) cur = d.element;
    else return cur;
  }
}

function messageOf(f: DescField): DescMessage | undefined {
  if (f.fieldKind === "message") return f.message;
  if (f.fieldKind === "list" && f.listKind === "message") return f.message;
  return undefined;
}

function compare(schema: z.ZodType, desc: DescMessage, path: string, problems: string[]): void {
  const shape = (schema as unknown as { shape: Record<string, z.ZodType> }).shape;
  const zodKeys = Object.keys(shape).sort();
  const protoKeys = desc.fields.map((f) => f.jsonName).sort();
  for (const k of zodKeys) if (!protoKeys.includes(k)) problems.push(`${path}.${k}: in contract.ts, not in ${desc.typeName}`);
  for (const k of protoKeys) if (!zodKeys.includes(k)) problems.push(`${path}.${k}: in ${desc.typeName}, not in contract.ts`);
  for (const f of desc.fields) {
    const inner = shape[f.jsonName];
    const m = messageOf(f);
    if (!inner) continue;
    const repeated = f.fieldKind === "list";
    const zodIsArray = (() => {
      let cur = inner;
      for (;;) {
        const d = defOf(cur);
        if (d.type === "array") return true;
        if ((d.type === "optional" || d.type === "nullable") && d.innerType) cur = d.innerType;
        else return false;
      }
    })();
    if (repeated !== zodIsArray) problems.push(`${path}.${f.jsonName}: repeated in proto = ${repeated}, array in zod = ${zodIsArray}`);
    if (m && !m.typeName.startsWith("google.protobuf.")) compare(unwrap(inner), m, `${path}.${f.jsonName}`, problems);
  }
}

describe("admin contract ⇄ admin.proto", () => {
  it("lists the same methods and the same fields", () => {
    const problems: string[] = [];
    for (const [service, methods] of Object.entries(ROUTES) as [keyof typeof ROUTES, Record<string, { request: z.ZodType; response: z.ZodType }>][]) {
      const proto = PROTO_SERVICES[service];
      expect(proto.methods.map((m) => m.name).sort()).toEqual(Object.keys(methods).sort());
      for (const m of proto.methods) {
        const r = methods[m.name]!;
        compare(r.request, m.input, `${service}/${m.name} request`, problems);
        compare(r.response, m.output, `${service}/${m.name} response`, problems);
      }
    }
    expect(problems).toEqual([]);
  });
});
