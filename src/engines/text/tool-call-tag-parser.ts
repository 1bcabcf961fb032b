import type { TextDelta, ToolCallDelta } from '../../engine/engine-event.js';
import { partialTagSuffix } from './tag-scanner.js';

export interface ToolCallTagOptions {
  /** Makes the id of each call (`call_...`); injected so tests are deterministic. */
  newCallId: () => string;
  open?: string;
  close?: string;
}

/**
 * Finds tool calls written as JSON inside tags, the form of Qwen 2.5/3, Hermes and many
 * fine-tunes: `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`.
 *
 * Invariants: text outside the tags passes through (held back only while it may be the start of
 * the opening tag); a call is emitted whole, as one tool_call piece with id, name and the
 * arguments as JSON text, once its closing tag arrives (the JSON cannot be checked earlier);
 * a body that is not such a JSON object is given back as text, tags included, so nothing the model
 * wrote is lost. Whitespace right before a call, and whitespace-only text once a call was made, is
 * dropped; trailing whitespace is therefore held back until later text (or the end) settles it.
 */
export class ToolCallTagParser {
  private inside = false;
  private held = '';
  private body = '';
  private calls = 0;
  private readonly open: string;
  private readonly close: string;

  constructor(private readonly options: ToolCallTagOptions) {
    this.open = options.open ?? '<tool_call>';
    this.close = options.close ?? '</tool_call>';
  }

  /** Calls emitted so far. */
  get callCount(): number {
    return this.calls;
  }

  push(text: string): Array<TextDelta | ToolCallDelta> {
    const pieces: Array<TextDelta | ToolCallDelta> = [];
    let buffer = this.held + text;
    this.held = '';
    for (;;) {
      const tag = this.inside ? this.close : this.open;
      const at = buffer.indexOf(tag);
      if (at !== -1) {
        if (this.inside) pieces.push(this.endCall(this.body + buffer.slice(0, at), true));
        else this.emitText(pieces, buffer.slice(0, at).trimEnd());
        buffer = buffer.slice(at + tag.length);
        this.inside = !this.inside;
        this.body = '';
        continue;
      }
      let keep = partialTagSuffix(buffer, tag);
      if (!this.inside) keep = buffer.length - buffer.slice(0, buffer.length - keep).trimEnd().length;
      const settled = buffer.slice(0, buffer.length - keep);
      if (this.inside) this.body += settled;
      else this.emitText(pieces, settled);
      this.held = buffer.slice(buffer.length - keep);
      return pieces;
    }
  }

  /** The output ended: an unclosed call still counts when its JSON is complete. */
  flush(): Array<TextDelta | ToolCallDelta> {
    const pieces: Array<TextDelta | ToolCallDelta> = [];
    if (this.inside) pieces.push(this.endCall(this.body + this.held, false));
    else this.emitText(pieces, this.held);
    this.inside = false;
    this.held = '';
    this.body = '';
    return pieces;
  }

  private endCall(body: string, closed: boolean): TextDelta | ToolCallDelta {
    const call = parseCall(body);
    if (call === undefined) return { type: 'text', text: this.open + body + (closed ? this.close : '') };
    return { type: 'tool_call', index: this.calls++, id: this.options.newCallId(), ...call };
  }

  private emitText(pieces: Array<TextDelta | ToolCallDelta>, text: string): void {
    if (text.length === 0 || (this.calls > 0 && text.trim().length === 0)) return;
    pieces.push({ type: 'text', text });
  }
}

/** `{"name": string, "arguments": object | string}` (`parameters` is accepted for `arguments`). */
function parseCall(body: string): { name: string; arguments: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { name, arguments: args, parameters } = parsed as Record<string, unknown>;
  const value = args ?? parameters ?? {};
  if (typeof name !== 'string' || name.length === 0) return undefined;
  if (typeof value === 'string') return { name, arguments: value };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return { name, arguments: JSON.stringify(value) };
}
