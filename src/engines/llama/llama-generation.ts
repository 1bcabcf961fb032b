import { randomUUID } from 'node:crypto';
import type { Subscriber } from 'rxjs';
import type { LlamaContextSequence, Token } from 'node-llama-cpp';
import { ContextLengthError } from '../../engine/context-length-error.js';
import { EngineError } from '../../engine/engine-error.js';
import type { EngineEvent, FinishReason } from '../../engine/engine-event.js';
import type { GenerationRequest } from '../../engine/generation-request.js';
import { RawOutputParser, type OutputDelta } from '../text/raw-output-parser.js';
import { renderChatPrompt } from './chat-prompt.js';
import { renderCompletionPrompt, type RawPrompt } from './completion-prompt.js';
import { GenerationMeter } from './generation-meter.js';
import type { LoadedLlamaModel } from './llama-runtime.js';
import { toEvaluateOptions } from './sampling-options.js';
import type { SequencePool } from './sequence-pool.js';
import { TokenTextDecoder } from './token-text-decoder.js';

/** Counters the engine keeps across generations (read by tests and, later, metrics). */
export interface LlamaCounters {
  decodedTokens: number;
  /** Generations a cancel (hang-up, shutdown) stopped between two prompt batches. */
  cancelledInPrefill: number;
  /** Generations a cancel stopped between two generated tokens. */
  cancelledInDecode: number;
  /** Tokens that finished decoding after their generation was cancelled: at most one per cancel. */
  decodedAfterCancel: number;
}

export interface LlamaGenerationDeps {
  loaded: LoadedLlamaModel;
  pool: SequencePool<LlamaContextSequence>;
  counters: LlamaCounters;
  /** The model's `disableReasoning`: a request that did not ask for reasoning starts after a closed thought. */
  disableReasoning: boolean;
}

/**
 * One request on the llama engine: render the prompt, borrow a sequence, reuse the cached prefix,
 * tell the acceptance (with the prompt's tokens and the cached part), decode token by token
 * through the output parsers, and give the sequence back. `run` never rejects: failures go to the
 * subscriber as EngineErrors. `cancel` makes it stop at the next token,
 * or the next prompt batch during prefill (the native step in flight cannot be interrupted), and
 * then the sequence is free.
 */
export class LlamaGeneration {
  private readonly abort = new AbortController();
  private failure?: EngineError;
  private readonly meter = new GenerationMeter();

  constructor(
    private readonly deps: LlamaGenerationDeps,
    private readonly request: GenerationRequest,
    private readonly subscriber: Subscriber<EngineEvent>,
  ) {}

  /**
   * Stops the generation at the next token. With a `failure` (shutdown), a subscriber still
   * listening gets it once the last decode step settled; an unsubscribed one hears nothing.
   */
  cancel(failure?: EngineError): void {
    this.failure ??= failure;
    this.abort.abort(failure ?? new EngineError('internal', 'The generation was cancelled.'));
  }

  async run(): Promise<void> {
    const { pool } = this.deps;
    let sequence: LlamaContextSequence | undefined;
    try {
      const prompt = this.render();
      sequence = await pool.acquire(prompt.tokens, this.abort.signal);
      if (!this.abort.signal.aborted) await this.decode(sequence, prompt);
    } catch (error) {
      if (!this.abort.signal.aborted) this.subscriber.error(toEngineError(error));
    } finally {
      if (sequence) pool.release(sequence);
      if (this.failure && !this.subscriber.closed) this.subscriber.error(this.failure);
    }
  }

  private render(): RawPrompt {
    const { model, chatWrapper, context } = this.deps.loaded;
    let prompt: RawPrompt;
    try {
      prompt = this.request.completion
        ? renderCompletionPrompt(model, this.request.completion, this.request.model)
        : renderChatPrompt(chatWrapper, model.tokenizer, this.request, this.deps.disableReasoning);
    } catch (error) {
      if (error instanceof EngineError) throw error;
      throw new EngineError(
        'invalid_request',
        `The model's chat template cannot render this conversation: ${(error as Error).message}`,
      );
    }
    if (prompt.tokens.length >= context.contextSize)
      throw new ContextLengthError(prompt.tokens.length, context.contextSize);
    return prompt;
  }

  private async decode(sequence: LlamaContextSequence, prompt: RawPrompt): Promise<void> {
    const { model } = this.deps.loaded;
    const tokens = prompt.tokens;
    // Keep the longest cached prefix, but evaluate at least one token: its logits give the first token.
    const cached = Math.min(sequence.compareContextTokens(tokens).firstDifferentIndex, tokens.length - 1);
    if (sequence.nextTokenIndex > cached) {
      await sequence.eraseContextTokenRanges([{ start: cached, end: sequence.nextTokenIndex }]);
    }
    const maxTokens = Math.min(
      this.request.sampling.maxTokens ?? Number.POSITIVE_INFINITY,
      sequence.contextSize - tokens.length,
    );
    const generated: Token[] = [];
    const options = await toEvaluateOptions(this.request.sampling, generated, this.deps.loaded);
    const decoder = new TokenTextDecoder<Token>(
      (pending, previous) => model.detokenize(pending, false, previous),
      tokens,
    );
    const parser = new RawOutputParser({
      stops: this.request.sampling.stop,
      hiddenStops: prompt.hiddenStops,
      startInReasoning: prompt.startsInReasoning,
      toolCalls: prompt.offersTools,
      newCallId: () => `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    });

    this.meter.startPrompt(tokens.length, cached);
    // Tokenized, within the context, sampling set up: from here a failure is no refusal.
    this.emit({ type: 'accepted', usage: this.meter.usage() });
    if (prompt.echo) this.emit({ type: 'text', text: prompt.echo });
    const rest = await this.prefill(sequence, tokens.slice(cached));
    if (rest === undefined) return;
    for await (const token of sequence.evaluate(rest, options)) {
      this.deps.counters.decodedTokens += 1;
      if (this.abort.signal.aborted) {
        this.deps.counters.decodedAfterCancel += 1;
        this.deps.counters.cancelledInDecode += 1;
        return;
      }
      generated.push(token);
      const step = parser.push(decoder.push(token));
      this.meter.countToken(parser.inReasoning || step.deltas.some((delta) => delta.type === 'reasoning'));
      // The counters ride the step's first piece; an ack alone when the parsers hold it all back.
      const { usage, timings } = this.meter.ack();
      const [first, ...rest] = step.deltas;
      this.emit(first === undefined ? { type: 'ack', usage, timings } : { ...first, usage, timings });
      for (const delta of rest) this.emit(delta);
      if (step.stop) {
        // A stop string ends the output; the parsers released what they held in this same step.
        return this.finish(parser, step.stop.requested ? step.stop.sequence : undefined);
      }
      if (!this.request.parallelToolCalls && parser.toolCallCount > 0)
        return this.finish(parser, undefined, this.release(parser, decoder));
      if (this.meter.completion >= maxTokens)
        return this.finish(parser, undefined, this.release(parser, decoder), 'length');
    }
    if (!this.abort.signal.aborted) this.finish(parser, undefined, this.release(parser, decoder));
  }

  /**
   * Evaluates all but the last batch of the prompt one batch at a time, so that a hang-up during a
   * long prefill stops it within one batch; returns the tokens left for `evaluate` (at least one,
   * whose logits give the first token), or undefined when cancelled.
   */
  private async prefill(sequence: LlamaContextSequence, pending: Token[]): Promise<Token[] | undefined> {
    const batchSize = sequence.context.batchSize;
    let start = 0;
    for (; pending.length - start > batchSize; start += batchSize) {
      await sequence.evaluateWithoutGeneratingNewTokens(pending.slice(start, start + batchSize));
      if (this.abort.signal.aborted) {
        this.deps.counters.cancelledInPrefill += 1;
        return undefined;
      }
    }
    return pending.slice(start);
  }

  /** What the decoder and the parsers still hold, at the end of the output. */
  private release(parser: RawOutputParser, decoder: TokenTextDecoder<Token>): OutputDelta[] {
    const step = parser.push(decoder.flush());
    return step.stop ? step.deltas : [...step.deltas, ...parser.finish()];
  }

  /** Sends the last deltas and `done`; the finish reason is `tool_calls` when calls were made. */
  private finish(
    parser: RawOutputParser,
    stopSequence?: string,
    tail: OutputDelta[] = [],
    reason?: FinishReason,
  ): void {
    for (const delta of tail) this.emit(delta);
    const finishReason = reason ?? (parser.toolCallCount > 0 ? 'tool_calls' : 'stop');
    this.emit({ type: 'done', finishReason, stopSequence, usage: this.meter.usage() });
    this.subscriber.complete();
  }

  private emit(event: EngineEvent): void {
    if (!this.abort.signal.aborted) this.subscriber.next(event);
  }
}

function toEngineError(error: unknown): EngineError {
  if (error instanceof EngineError) return error;
  return new EngineError('internal', `The llama engine failed: ${(error as Error)?.message ?? String(error)}`, {
    cause: error,
  });
}
