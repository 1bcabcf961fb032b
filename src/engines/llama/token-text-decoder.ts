/** Detokenizes `tokens` as the continuation of `previous` (SentencePiece spacing depends on it). */
export type Detokenize<T> = (tokens: readonly T[], previous: readonly T[]) => string;

/** UTF-8 needs at most four byte tokens for one character. */
const MAX_PENDING = 4;
/** Tokens of left context handed to the detokenizer. */
const CONTEXT_TOKENS = 8;

/**
 * Turns generated tokens into text one token at a time. A character split over byte tokens
 * (`<0xE2><0x82><0xAC>`) is held back until it is complete, so no replacement character is shown
 * for half a character (another reason an ack may come without a delta); a sequence that stays
 * invalid for four tokens is released as it is.
 */
export class TokenTextDecoder<T> {
  private readonly context: T[];
  private pending: T[] = [];

  constructor(
    private readonly detokenize: Detokenize<T>,
    /** The prompt's last tokens, so the first generated token is spaced as a continuation. */
    primer: readonly T[] = [],
  ) {
    this.context = primer.slice(-CONTEXT_TOKENS);
  }

  push(token: T): string {
    this.pending.push(token);
    const text = this.detokenize(this.pending, this.context);
    if (text.endsWith('\uFFFD') && this.pending.length < MAX_PENDING) return '';
    this.context.push(...this.pending);
    this.context.splice(0, Math.max(0, this.context.length - CONTEXT_TOKENS));
    this.pending = [];
    return text;
  }

  /** Whatever is still pending, at the end of the output. */
  flush(): string {
    if (this.pending.length === 0) return '';
    const text = this.detokenize(this.pending, this.context);
    this.pending = [];
    return text;
  }
}
