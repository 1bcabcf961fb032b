/**
 * OpenAI's `encoding_format: base64`: the vector's float32 values, little-endian, in base64 (what
 * the SDKs decode by default). A vector comes from an engine in either form.
 */
export function toBase64Vector(vector: number[] | string): string {
  if (typeof vector === 'string') return vector;
  const floats = new Float32Array(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

export function toFloatVector(vector: number[] | string): number[] {
  if (typeof vector !== 'string') return vector;
  const bytes = Buffer.from(vector, 'base64');
  const floats = new Float32Array(bytes.byteLength / 4);
  for (let index = 0; index < floats.length; index += 1) floats[index] = bytes.readFloatLE(index * 4);
  return Array.from(floats);
}
