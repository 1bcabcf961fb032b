/**
 * A small byte-fallback SentencePiece vocabulary (llama.cpp's `llama` tokenizer): `<unk>`, `<s>`,
 * `</s>`, the 256 byte tokens, ChatML's control tokens, the reasoning and tool-call tags as
 * user-defined tokens (as Qwen ships them), every printable ASCII character and a few words with
 * all their prefixes (SentencePiece merges pairs only into pieces that exist).
 */

/** llama.cpp's `llama_token_type`. */
export const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, byte: 6 } as const;

export interface TinyVocab {
  tokens: string[];
  scores: number[];
  types: number[];
  bos: number;
  eos: number;
  unk: number;
  /** The fill-in-the-middle control tokens (prefix, suffix, middle), when the vocabulary has them. */
  fim?: { prefix: number; suffix: number; middle: number };
  /** Tokens a random model should rarely pick: control, user-defined, and non-printable bytes. */
  quiet: Set<number>;
}

const WORDS = [
  'the',
  'and',
  'hello',
  'world',
  'gantry',
  'token',
  'stream',
  'model',
  'you',
  'is',
  'to',
  'of',
  'a',
  'in',
  'it',
];
const CHAT_CONTROL = ['<|im_start|>', '<|im_end|>'];
const TAGS = ['<think>', '</think>', '<tool_call>', '</tool_call>'];
const SPACE = '\u2581';

/** Qwen's fill-in-the-middle tokens, appended (so the other ids, and the weights, stay as they are) when asked for. */
const FIM_CONTROL = ['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>'];

export function buildTinyVocab(fillInTheMiddle = false): TinyVocab {
  const tokens: string[] = [];
  const scores: number[] = [];
  const types: number[] = [];
  const quiet = new Set<number>();
  const add = (piece: string, type: number, score: number, isQuiet: boolean) => {
    if (isQuiet) quiet.add(tokens.length);
    tokens.push(piece);
    types.push(type);
    scores.push(score);
  };

  add('<unk>', TOKEN_TYPE.unknown, 0, true);
  add('<s>', TOKEN_TYPE.control, 0, true);
  add('</s>', TOKEN_TYPE.control, 0, true);
  for (let byte = 0; byte < 256; byte += 1) {
    const printable = byte === 0x0a || (byte >= 0x20 && byte < 0x7f);
    add(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, TOKEN_TYPE.byte, 0, !printable);
  }
  for (const piece of CHAT_CONTROL) add(piece, TOKEN_TYPE.control, 0, true);
  for (const piece of TAGS) add(piece, TOKEN_TYPE.userDefined, 0, true);

  const pieces = new Set<string>([SPACE]);
  for (let code = 0x21; code < 0x7f; code += 1) pieces.add(String.fromCharCode(code));
  for (const word of WORDS) {
    const spelled = SPACE + word;
    for (let length = 2; length <= spelled.length; length += 1) pieces.add(spelled.slice(0, length));
  }
  for (const piece of pieces) add(piece, TOKEN_TYPE.normal, -1000 + 10 * [...piece].length, false);

  if (!fillInTheMiddle) return { tokens, scores, types, bos: 1, eos: 2, unk: 0, quiet };
  const prefix = tokens.length;
  for (const piece of FIM_CONTROL) add(piece, TOKEN_TYPE.control, 0, true);
  return {
    tokens,
    scores,
    types,
    bos: 1,
    eos: 2,
    unk: 0,
    quiet,
    fim: { prefix, suffix: prefix + 1, middle: prefix + 2 },
  };
}
