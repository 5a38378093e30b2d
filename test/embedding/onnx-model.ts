// Builds tiny ONNX models byte by byte for the tests: a hand-written protobuf encoder over the few
// onnx.proto messages needed (ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto).
// Field numbers and wire types are those of onnx.proto; nothing is downloaded.

class Pb {
  private parts: Buffer[] = [];

  private varint(n: bigint): void {
    const out: number[] = [];
    let v = BigInt.asUintN(64, n);
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) b |= 0x80;
      out.push(b);
    } while (v > 0n);
    this.parts.push(Buffer.from(out));
  }

  private tag(field: number, wire: number): void {
    this.varint(BigInt((field << 3) | wire));
  }

  int(field: number, v: number | bigint): this {
    this.tag(field, 0);
    this.varint(BigInt(v));
    return this;
  }

  bytes(field: number, b: Buffer | Uint8Array): this {
    this.tag(field, 2);
    this.varint(BigInt(b.length));
    this.parts.push(Buffer.from(b));
    return this;
  }

  str(field: number, s: string): this {
    return this.bytes(field, Buffer.from(s, "utf8"));
  }

  msg(field: number, m: Pb): this {
    return this.bytes(field, m.done());
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const FLOAT = 1;
const INT32 = 6;
const INT64 = 7;
const FLOAT16 = 10;
const DOUBLE = 11;
const ELEM_TYPES = { float16: FLOAT16, float64: DOUBLE, int32: INT32 } as const;
const ATTR_INTS = 7;
const ATTR_INT = 2;

/** TypeProto.Tensor with named (symbolic) or fixed dims */
function valueInfo(name: string, elemType: number, dims: (string | number)[]): Pb {
  const shape = new Pb();
  for (const d of dims) shape.msg(1, typeof d === "number" ? new Pb().int(1, d) : new Pb().str(2, d));
  const tensorType = new Pb().int(1, elemType).msg(2, shape);
  return new Pb().str(1, name).msg(2, new Pb().msg(1, tensorType));
}

function floatTensor(name: string, dims: number[], values: Float32Array): Pb {
  const t = new Pb();
  for (const d of dims) t.int(1, d);
  t.int(2, FLOAT);
  t.str(8, name);
  t.bytes(9, Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  return t;
}

function node(op: string, inputs: string[], outputs: string[], attrs: Pb[] = []): Pb {
  const n = new Pb();
  for (const i of inputs) n.str(1, i);
  for (const o of outputs) n.str(2, o);
  n.str(3, `${op.toLowerCase()}_0`);
  n.str(4, op);
  for (const a of attrs) n.msg(5, a);
  return n;
}

export interface TinyModel {
  vocabSize: number;
  dims: number;
  /** the embedding table, row-major [vocabSize × dims] */
  table: Float32Array;
  bytes: Buffer;
}

/** Deterministic table: row r, column c = sin(r·7 + c·3) (distinct, non-trivial directions). */
export function embeddingTable(vocabSize: number, dims: number): Float32Array {
  const t = new Float32Array(vocabSize * dims);
  for (let r = 0; r < vocabSize; r++) for (let c = 0; c < dims; c++) t[r * dims + c] = Math.sin(r * 7 + c * 3 + 1);
  return t;
}

/**
 * input_ids [batch, seq] (+ attention_mask, unused by the graph but declared like a BERT export)
 * → Gather(table) → last_hidden_state [batch, seq, dims]; with `pooled`, ReduceMean over the
 * token axis → sentence_embedding [batch, dims] instead. With `outputType`, a final Cast gives the
 * output that element type (like a model_fp16.onnx export).
 */
export function tinyEmbeddingModel(
  vocabSize: number,
  dims: number,
  opts: { pooled?: boolean; withMask?: boolean; outputType?: keyof typeof ELEM_TYPES } = {},
): TinyModel {
  const table = embeddingTable(vocabSize, dims);
  const graph = new Pb();
  const outName = opts.pooled ? "sentence_embedding" : "last_hidden_state";
  const last = opts.outputType ? "uncast" : outName;
  if (opts.pooled) {
    graph.msg(1, node("Gather", ["table", "input_ids"], ["gathered"], [new Pb().str(1, "axis").int(3, 0).int(20, ATTR_INT)]));
    graph.msg(1, node("ReduceMean", ["gathered"], [last], [new Pb().str(1, "axes").int(8, 1).int(20, ATTR_INTS), new Pb().str(1, "keepdims").int(3, 0).int(20, ATTR_INT)]));
  } else {
    graph.msg(1, node("Gather", ["table", "input_ids"], [last], [new Pb().str(1, "axis").int(3, 0).int(20, ATTR_INT)]));
  }
  const outType = opts.outputType ? ELEM_TYPES[opts.outputType] : FLOAT;
  if (opts.outputType) graph.msg(1, node("Cast", [last], [outName], [new Pb().str(1, "to").int(3, outType).int(20, ATTR_INT)]));
  graph.str(2, "tiny_embedder");
  graph.msg(5, floatTensor("table", [vocabSize, dims], table));
  graph.msg(11, valueInfo("input_ids", INT64, ["batch", "seq"]));
  if (opts.withMask) graph.msg(11, valueInfo("attention_mask", INT64, ["batch", "seq"]));
  graph.msg(12, valueInfo(outName, outType, opts.pooled ? ["batch", dims] : ["batch", "seq", dims]));
  const model = new Pb()
    .int(1, 8) // ir_version
    .str(2, "infinity-memory-test")
    .msg(7, graph)
    .msg(8, new Pb().str(1, "").int(2, 13)); // opset 13: ReduceMean takes axes as an attribute
  return { vocabSize, dims, table, bytes: model.done() };
}
