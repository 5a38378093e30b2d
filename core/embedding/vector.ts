// Vector arithmetic shared by the embedders and the vector channel.

export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`dot: lengths ${a.length} and ${b.length} differ`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export function norm(a: Float32Array): number {
  return Math.sqrt(dot(a, a));
}

/** Scales to unit length in place; a zero vector stays zero (it matches nothing). */
export function l2Normalize(a: Float32Array): Float32Array {
  const n = norm(a);
  if (n > 0) for (let i = 0; i < a.length; i++) a[i] = a[i]! / n;
  return a;
}

/** Cosine similarity in [-1, 1]; 0 when either vector is zero. */
export function cosine(a: Float32Array, b: Float32Array): number {
  const d = norm(a) * norm(b);
  return d === 0 ? 0 : dot(a, b) / d;
}

/**
 * Mean of the token vectors whose mask is 1 (sentence embedding from a transformer's last hidden
 * state). `hidden` is [tokens × dims] row-major for one sequence.
 */
export function meanPool(hidden: ArrayLike<number>, mask: ArrayLike<number | bigint>, dims: number): Float32Array {
  const out = new Float32Array(dims);
  let n = 0;
  for (let t = 0; t < mask.length; t++) {
    if (Number(mask[t]) === 0) continue;
    n++;
    for (let j = 0; j < dims; j++) out[j] = out[j]! + Number(hidden[t * dims + j]);
  }
  if (n > 0) for (let j = 0; j < dims; j++) out[j] = out[j]! / n;
  return out;
}

/** Little-endian float32 bytes, the form sqlite-vec stores and reads. */
export function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}
