/**
 * A minimal GGUF v3 encoder (little-endian), enough to write F32 models: a header, typed metadata,
 * tensor infos, and aligned tensor data. Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
 *
 * llama.cpp checks metadata types strictly (counts are UINT32, epsilons FLOAT32), so every value
 * names its type explicitly instead of being inferred from a JS number.
 */

export type GgufValue =
  | { type: 'u32'; value: number }
  | { type: 'i32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'string[]'; value: readonly string[] }
  | { type: 'f32[]'; value: readonly number[] }
  | { type: 'i32[]'; value: readonly number[] };

export interface GgufTensor {
  name: string;
  /** Dimensions in ggml order: the first is the one that varies fastest in memory. */
  dims: readonly number[];
  data: Float32Array;
}

const VALUE_TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;
const GGML_TYPE_F32 = 0;
const ALIGNMENT = 32;

/** Encodes a whole GGUF file. `general.alignment` must not be in `metadata` (it is written here). */
export function encodeGguf(metadata: ReadonlyArray<[string, GgufValue]>, tensors: readonly GgufTensor[]): Buffer {
  const out = new ByteSink();
  out.bytes(Buffer.from('GGUF', 'ascii'));
  out.u32(3);
  out.u64(tensors.length);
  out.u64(metadata.length + 1);
  writeKeyValue(out, 'general.alignment', { type: 'u32', value: ALIGNMENT });
  for (const [key, value] of metadata) writeKeyValue(out, key, value);

  let offset = 0;
  for (const tensor of tensors) {
    const expected = tensor.dims.reduce((product, dim) => product * dim, 1);
    if (expected !== tensor.data.length) {
      throw new Error(`tensor ${tensor.name}: dims hold ${expected} values, data has ${tensor.data.length}`);
    }
    out.string(tensor.name);
    out.u32(tensor.dims.length);
    for (const dim of tensor.dims) out.u64(dim);
    out.u32(GGML_TYPE_F32);
    out.u64(offset);
    offset = alignUp(offset + tensor.data.byteLength);
  }
  out.pad();
  for (const tensor of tensors) {
    out.bytes(Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
    out.pad();
  }
  return out.toBuffer();
}

function writeKeyValue(out: ByteSink, key: string, entry: GgufValue): void {
  out.string(key);
  switch (entry.type) {
    case 'u32':
      out.u32(VALUE_TYPE.u32);
      return out.u32(entry.value);
    case 'i32':
      out.u32(VALUE_TYPE.i32);
      return out.i32(entry.value);
    case 'f32':
      out.u32(VALUE_TYPE.f32);
      return out.f32(entry.value);
    case 'bool':
      out.u32(VALUE_TYPE.bool);
      return out.bytes(Buffer.from([entry.value ? 1 : 0]));
    case 'string':
      out.u32(VALUE_TYPE.string);
      return out.string(entry.value);
    case 'string[]':
      out.u32(VALUE_TYPE.array);
      out.u32(VALUE_TYPE.string);
      out.u64(entry.value.length);
      for (const item of entry.value) out.string(item);
      return;
    case 'f32[]':
      out.u32(VALUE_TYPE.array);
      out.u32(VALUE_TYPE.f32);
      out.u64(entry.value.length);
      for (const item of entry.value) out.f32(item);
      return;
    case 'i32[]':
      out.u32(VALUE_TYPE.array);
      out.u32(VALUE_TYPE.i32);
      out.u64(entry.value.length);
      for (const item of entry.value) out.i32(item);
      return;
  }
}

function alignUp(offset: number): number {
  return Math.ceil(offset / ALIGNMENT) * ALIGNMENT;
}

/** Appends little-endian scalars to a list of chunks. */
class ByteSink {
  private readonly chunks: Buffer[] = [];
  private length = 0;

  bytes(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  u32(value: number): void {
    const chunk = Buffer.alloc(4);
    chunk.writeUInt32LE(value);
    this.bytes(chunk);
  }

  i32(value: number): void {
    const chunk = Buffer.alloc(4);
    chunk.writeInt32LE(value);
    this.bytes(chunk);
  }

  f32(value: number): void {
    const chunk = Buffer.alloc(4);
    chunk.writeFloatLE(value);
    this.bytes(chunk);
  }

  u64(value: number): void {
    const chunk = Buffer.alloc(8);
    chunk.writeBigUInt64LE(BigInt(value));
    this.bytes(chunk);
  }

  string(value: string): void {
    const encoded = Buffer.from(value, 'utf8');
    this.u64(encoded.length);
    this.bytes(encoded);
  }

  /** Zero bytes up to the next multiple of the alignment. */
  pad(): void {
    const padding = alignUp(this.length) - this.length;
    if (padding > 0) this.bytes(Buffer.alloc(padding));
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks, this.length);
  }
}
