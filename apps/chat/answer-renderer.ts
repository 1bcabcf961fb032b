import { ANSI, PLAIN, type TextStyle } from './ansi-style.js';
import { AnswerStats } from './answer-stats.js';
import type { ClientEvent } from './client-event.js';
import { formatStatusLine, type WaitPhase } from './status-line.js';

/** Anything text can be written to: process.stdout, process.stderr, or a test's collector. */
export interface TextSink {
  write(text: string): unknown;
}

export interface RendererOptions {
  /** The answer: text and tool calls (stdout). */
  answer: TextSink;
  /** Everything about the answer: reasoning, status line, notes, stats (stdout in a chat, stderr in one-shot mode). */
  side: TextSink;
  /** A terminal: styles and the live status line. Off for pipes and files. */
  ansi: boolean;
  /** Milliseconds, monotonic (performance.now in the program, a fake in tests). */
  clock: () => number;
}

/** How long the heart stays bright after a heartbeat. */
const BEAT_FLASH_MS = 300;

type Segment = 'none' | 'reasoning' | 'text' | 'tool';

/**
 * Draws one answer as its events arrive. While nothing visible has arrived it keeps a status line
 * (phase, heartbeats, elapsed time) on the side stream, redrawn in place on every event and
 * `tick()`, and erased before anything else is written. Reasoning is dimmed, each tool call gets
 * its own line, and `end()` writes the outcome and the stats line.
 */
export class AnswerRenderer {
  private readonly style: TextStyle;
  private readonly stats: AnswerStats;
  private readonly lastChar = new Map<TextSink, string>();
  private phase: WaitPhase = 'connecting';
  private segment: Segment = 'none';
  private frame = 0;
  private lastBeatAt = Number.NEGATIVE_INFINITY;
  private statusShown = false;
  private ended = false;
  private finishReason?: string;
  private errorMessage?: string;

  constructor(private readonly options: RendererOptions) {
    this.style = options.ansi ? ANSI : PLAIN;
    this.stats = new AnswerStats(options.clock());
    this.drawStatus();
  }

  handle(event: ClientEvent): void {
    if (this.ended) return;
    const now = this.options.clock();
    this.stats.record(event, now);
    switch (event.type) {
      case 'opened':
        if (this.phase === 'connecting') this.phase = 'prefilling';
        break;
      case 'queued':
        this.phase = 'queued';
        break;
      case 'heartbeat':
        this.lastBeatAt = now;
        break;
      case 'text':
        this.enter('text');
        this.write(this.options.answer, event.text);
        return;
      case 'reasoning':
        this.enter('reasoning');
        this.write(this.options.side, event.text, this.style.dim);
        return;
      case 'tool_call_start':
        this.endSegment();
        this.enter('tool');
        this.write(this.options.answer, `→ tool call ${this.style.bold(event.name)} `, this.style.cyan);
        return;
      case 'tool_call_args':
        this.enter('tool');
        this.write(this.options.answer, event.fragment);
        return;
      case 'done':
        this.finishReason = event.finishReason;
        break;
      case 'error':
        this.errorMessage = event.message;
        break;
    }
    if (this.phase !== 'queued' && this.stats.prefilled) this.phase = 'generating';
    this.drawStatus();
  }

  /** Advances the spinner and the elapsed time (called on a timer while waiting). */
  tick(): void {
    this.frame += 1;
    this.drawStatus();
  }

  /** Finishes the answer: ends its line, then notes how it ended and the stats. */
  end(stopped = false): void {
    if (this.ended) return;
    this.clearStatus();
    this.ended = true;
    this.endSegment();
    const side = this.options.side;
    if (stopped) this.writeLine(side, '(stopped)', this.style.dim);
    else if (this.errorMessage !== undefined) this.writeLine(side, `error: ${this.errorMessage}`, this.style.red);
    else if (this.finishReason === 'length') this.writeLine(side, '(cut at max tokens)', this.style.dim);
    const stats = this.stats.format();
    if (stats) this.writeLine(side, stats, this.style.dim);
  }

  private enter(segment: Segment): void {
    if (segment !== this.segment) this.endSegment();
    this.segment = segment;
  }

  /** Ends the current segment's line on its own stream. */
  private endSegment(): void {
    if (this.segment === 'none') return;
    const sink = this.segment === 'reasoning' ? this.options.side : this.options.answer;
    const last = this.lastChar.get(sink);
    if (last !== undefined && last !== '\n') this.write(sink, '\n');
    this.segment = 'none';
  }

  private writeLine(sink: TextSink, text: string, paint: (text: string) => string): void {
    this.write(sink, text, paint);
    this.write(sink, '\n');
  }

  /** Writes `text` painted; the line bookkeeping looks at the text itself, not at the escapes. */
  private write(sink: TextSink, text: string, paint: (text: string) => string = (plain) => plain): void {
    if (text.length === 0) return;
    this.clearStatus();
    sink.write(paint(text));
    this.lastChar.set(sink, text[text.length - 1]);
  }

  private drawStatus(): void {
    if (!this.options.ansi || this.ended || this.stats.outputStarted) return;
    const now = this.options.clock();
    const line = formatStatusLine(
      {
        phase: this.phase,
        frame: this.frame,
        heartbeats: this.stats.heartbeats,
        beatFresh: now - this.lastBeatAt < BEAT_FLASH_MS,
        elapsedMs: now - this.stats.startedAt,
      },
      this.style,
    );
    this.options.side.write(ANSI.clearLine + line);
    this.statusShown = true;
  }

  private clearStatus(): void {
    if (!this.statusShown) return;
    this.options.side.write(ANSI.clearLine);
    this.statusShown = false;
  }
}
