/** Characters per token in the mock's accounting (apps/mock-upstream/mock-prefix-cache.ts). */
const CHARS_PER_TOKEN = 4;

const WORDS = [
  'policy',
  'customer',
  'account',
  'refund',
  'shipment',
  'invoice',
  'warranty',
  'order',
  'support',
  'request',
  'contract',
  'delivery',
  'payment',
  'service',
  'record',
  'status',
  'update',
  'review',
  'report',
  'section',
  'clause',
  'item',
  'period',
  'amount',
  'balance',
  'notice',
  'claim',
  'term',
  'detail',
  'summary',
];

/** A deterministic generator (mulberry32): the same seed gives the same texts in every run. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** `tokens` tokens of words after `head`, drawn from `seed`: texts with different seeds differ from their start. */
export function textOf(head: string, tokens: number, seed: number): string {
  const next = random(seed);
  let text = head;
  while (text.length < tokens * CHARS_PER_TOKEN)
    text += ` ${WORDS[Math.floor(next() * WORDS.length)]}${Math.floor(next() * 1000)}`;
  return text;
}

export interface ConversationShape {
  systemPrompts: number;
  systemPromptTokens: number;
  /** The first user turn: a document pasted into the conversation, its own. */
  documentTokens: number;
  followUpTokens: number;
  turns: number;
  /** A user's pause before each follow-up, drawn evenly from this range: other traffic moves meanwhile. */
  thinkMs: [number, number];
}

/** One conversation's opening and its follow-up questions; the answers come from the engine. */
export interface ConversationScript {
  system: string;
  document: string;
  followUps: string[];
  /** The pause before each follow-up. */
  thinkMs: number[];
}

/**
 * Conversation `index` of a workload: one of a few long system prompts (the apps of a fleet,
 * each behind many conversations), then a document of its own, then short follow-ups.
 */
export function conversationScript(shape: ConversationShape, index: number): ConversationScript {
  const app = index % shape.systemPrompts;
  const pause = random(4_000_000 + index);
  const [shortest, longest] = shape.thinkMs;
  return {
    system: textOf(
      `You are assistant ${app} of the support desk. Follow these rules.`,
      shape.systemPromptTokens,
      1000 + app,
    ),
    document: textOf(`Conversation ${index}. Summarise this case file:`, shape.documentTokens, 2_000_000 + index),
    followUps: Array.from({ length: shape.turns - 1 }, (_, turn) =>
      textOf(`Question ${turn + 1} about case ${index}:`, shape.followUpTokens, 3_000_000 + index * 64 + turn),
    ),
    thinkMs: Array.from({ length: shape.turns - 1 }, () => shortest + pause() * (longest - shortest)),
  };
}
