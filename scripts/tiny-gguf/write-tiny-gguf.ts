import { writeFileSync } from 'node:fs';
import { CHATML_TOOLS_TEMPLATE } from './chatml-tools-template.js';
import { encodeGguf, type GgufTensor, type GgufValue } from './gguf-writer.js';
import { buildTinyVocab } from './tiny-vocab.js';

/** The shape of the tiny model; the defaults give a ~0.6 MB file that decodes thousands of tokens/s on one thread. */
export interface TinyModelShape {
  embedding: number;
  layers: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  contextLength: number;
  /** Seeds the weights: the same seed writes the same bytes. */
  seed: number;
  /** Adds fill-in-the-middle tokens (Qwen's) to the vocabulary, for infill; absent: the model has none. */
  fillInTheMiddle?: boolean;
}

export const DEFAULT_TINY_SHAPE: TinyModelShape = {
  embedding: 64,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  feedForward: 128,
  contextLength: 4096,
  seed: 42,
};

/** Standard deviation of the output projection: wide logits make the rare tokens (EOS, tags) very unlikely. */
const OUTPUT_SCALE = 0.4;

/**
 * Builds a llama-architecture GGUF with random weights: gibberish output, but a real tokenizer,
 * chat template and compute graph, so the engine can be tested end to end without a download.
 * Tensor names and shapes follow llama.cpp's LLM_ARCH_LLAMA (src/llama-model.cpp).
 */
export function buildTinyGguf(shape: TinyModelShape = DEFAULT_TINY_SHAPE): Buffer {
  const vocab = buildTinyVocab(shape.fillInTheMiddle === true);
  const random = gaussian(shape.seed);
  const { embedding: embd, feedForward: ff } = shape;
  const headDim = embd / shape.heads;
  const kvDim = headDim * shape.kvHeads;
  const nVocab = vocab.tokens.length;

  const matrix = (name: string, dims: [number, number], std: number): GgufTensor => ({
    name,
    dims,
    data: Float32Array.from({ length: dims[0] * dims[1] }, () => random() * std),
  });
  const ones = (name: string): GgufTensor => ({ name, dims: [embd], data: new Float32Array(embd).fill(1) });

  const output = matrix('output.weight', [embd, nVocab], OUTPUT_SCALE);
  for (const token of vocab.quiet) output.data.fill(0, token * embd, (token + 1) * embd);

  const tensors: GgufTensor[] = [matrix('token_embd.weight', [embd, nVocab], 1), ones('output_norm.weight'), output];
  const inputStd = 1 / Math.sqrt(embd);
  for (let layer = 0; layer < shape.layers; layer += 1) {
    const block = `blk.${layer}`;
    tensors.push(
      ones(`${block}.attn_norm.weight`),
      matrix(`${block}.attn_q.weight`, [embd, embd], inputStd),
      matrix(`${block}.attn_k.weight`, [embd, kvDim], inputStd),
      matrix(`${block}.attn_v.weight`, [embd, kvDim], inputStd),
      matrix(`${block}.attn_output.weight`, [embd, embd], inputStd),
      ones(`${block}.ffn_norm.weight`),
      matrix(`${block}.ffn_gate.weight`, [embd, ff], inputStd),
      matrix(`${block}.ffn_up.weight`, [embd, ff], inputStd),
      matrix(`${block}.ffn_down.weight`, [ff, embd], 1 / Math.sqrt(ff)),
    );
  }

  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const metadata: Array<[string, GgufValue]> = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'gantry-tiny' }],
    ['llama.context_length', u32(shape.contextLength)],
    ['llama.embedding_length', u32(embd)],
    ['llama.block_count', u32(shape.layers)],
    ['llama.feed_forward_length', u32(ff)],
    ['llama.attention.head_count', u32(shape.heads)],
    ['llama.attention.head_count_kv', u32(shape.kvHeads)],
    ['llama.rope.dimension_count', u32(headDim)],
    ['llama.rope.freq_base', { type: 'f32', value: 10_000 }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.vocab_size', u32(nVocab)],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'string[]', value: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: 'f32[]', value: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: 'i32[]', value: vocab.types }],
    ['tokenizer.ggml.bos_token_id', u32(vocab.bos)],
    ['tokenizer.ggml.eos_token_id', u32(vocab.eos)],
    ['tokenizer.ggml.unknown_token_id', u32(vocab.unk)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
    // No SentencePiece space before each text after a control token: ChatML renders exactly.
    ['tokenizer.ggml.add_space_prefix', { type: 'bool', value: false }],
    ['tokenizer.chat_template', { type: 'string', value: CHATML_TOOLS_TEMPLATE }],
    ...(vocab.fim
      ? ([
          ['tokenizer.ggml.fim_pre_token_id', u32(vocab.fim.prefix)],
          ['tokenizer.ggml.fim_suf_token_id', u32(vocab.fim.suffix)],
          ['tokenizer.ggml.fim_mid_token_id', u32(vocab.fim.middle)],
        ] as Array<[string, GgufValue]>)
      : []),
  ];
  return encodeGguf(metadata, tensors);
}

/** Writes the tiny model to `path`; returns its size in bytes. */
export function writeTinyGguf(path: string, shape: TinyModelShape = DEFAULT_TINY_SHAPE): number {
  const bytes = buildTinyGguf(shape);
  writeFileSync(path, bytes);
  return bytes.length;
}

/** Standard normal samples from a seeded mulberry32 generator (Box-Muller). */
function gaussian(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}
