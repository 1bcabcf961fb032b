import type { ReasoningDelta, TextDelta } from '../../engine/engine-event.js';
import { partialTagSuffix } from './tag-scanner.js';

type SplitPiece = TextDelta | ReasoningDelta;

export interface ReasoningTagOptions {
  /** The prompt already opened the tag (templates that end the generation prompt with `<think>`). */
  startInside?: boolean;
  open?: string;
  close?: string;
}

/**
 * Splits streamed model output on `<think>...</think>` into reasoning and answer text.
 *
 * Invariants: a tag split across pieces is recognised and never shown; text that may still become
 * a tag is held back until the next piece settles it (so a piece can yield nothing); whitespace at
 * the start of the reasoning and of the answer after it, and at the end of the reasoning, is
 * dropped (templates put line breaks around the tags).
 */
export class ReasoningTagParser {
  private inside: boolean;
  private held = '';
  /** Nothing has been emitted yet in the current segment: leading whitespace is dropped. */
  private segmentStart: boolean;
  private readonly open: string;
  private readonly close: string;

  constructor(options: ReasoningTagOptions = {}) {
    this.inside = options.startInside ?? false;
    this.segmentStart = this.inside;
    this.open = options.open ?? '<think>';
    this.close = options.close ?? '</think>';
  }

  /** Whether the output is inside the reasoning now. */
  get inReasoning(): boolean {
    return this.inside;
  }

  push(text: string): SplitPiece[] {
    const pieces: SplitPiece[] = [];
    let buffer = this.held + text;
    this.held = '';
    for (;;) {
      const tag = this.inside ? this.close : this.open;
      const at = buffer.indexOf(tag);
      if (at !== -1) {
        this.emit(pieces, this.inside ? buffer.slice(0, at).trimEnd() : buffer.slice(0, at));
        buffer = buffer.slice(at + tag.length);
        this.inside = !this.inside;
        this.segmentStart = true;
        continue;
      }
      let keep = partialTagSuffix(buffer, tag);
      if (this.inside) keep = buffer.length - buffer.slice(0, buffer.length - keep).trimEnd().length;
      this.emit(pieces, buffer.slice(0, buffer.length - keep));
      this.held = buffer.slice(buffer.length - keep);
      return pieces;
    }
  }

  /** The output ended: releases what was held (an unclosed reasoning stays reasoning). */
  flush(): SplitPiece[] {
    const pieces: SplitPiece[] = [];
    this.emit(pieces, this.inside ? this.held.trimEnd() : this.held);
    this.held = '';
    return pieces;
  }

  private emit(pieces: SplitPiece[], text: string): void {
    const shown = this.segmentStart ? text.trimStart() : text;
    if (shown.length === 0) return;
    this.segmentStart = false;
    pieces.push(this.inside ? { type: 'reasoning', text: shown } : { type: 'text', text: shown });
  }
}
