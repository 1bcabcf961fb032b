import { EventSourceParserStream } from 'eventsource-parser/stream';
import { Observable, type Subscriber } from 'rxjs';
import {
  ACCEPTED,
  EngineError,
  InferenceEngine,
  makeTimings,
  ZERO_USAGE,
  type EngineErrorKind,
  type EngineEvent,
  type FinishReason,
  type GenerationRequest,
  type TokenUsage,
} from '../../src/index.js';
import type { ForwardModelConfig } from './forward-model-config.js';
import { chatCompletionsBody } from './forward-request.js';

/** What this engine reads of a `chat.completion.chunk`. */
interface ChatChunk {
  choices?: Array<{ delta?: ChunkDelta; finish_reason?: string | null }>;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
  } | null;
}

interface ChunkDelta {
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
}

const FINISH_REASONS: ReadonlySet<string> = new Set(['stop', 'length', 'tool_calls', 'content_filter']);

/**
 * Forwards each generation to an OpenAI-compatible Chat Completions API that takes its key in a
 * header of its own (Azure OpenAI's `api-key`), and maps the streamed chunks onto Gantry's engine
 * events: `accepted` once the API answered OK, then its output. Cold: subscribing sends the
 * request, unsubscribing (a client that hung up) aborts it.
 */
export class ForwardEngine extends InferenceEngine {
  constructor(
    private readonly config: ForwardModelConfig,
    private readonly apiKey: string,
  ) {
    super();
  }

  generate(request: GenerationRequest): Observable<EngineEvent> {
    return new Observable<EngineEvent>((subscriber) => {
      const abort = new AbortController();
      this.forward(request, subscriber, abort.signal).then(
        () => subscriber.complete(),
        (error: unknown) => {
          if (!abort.signal.aborted)
            subscriber.error(
              error instanceof EngineError
                ? error
                : new EngineError('upstream', 'The API could not be reached.', { cause: error }),
            );
        },
      );
      return () => abort.abort();
    });
  }

  private async forward(
    request: GenerationRequest,
    events: Subscriber<EngineEvent>,
    signal: AbortSignal,
  ): Promise<void> {
    const started = performance.now();
    const response = await fetch(`${this.config.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      signal,
      headers: { 'content-type': 'application/json', [this.config.authHeader]: this.apiKey, ...request.traceHeaders },
      body: JSON.stringify(chatCompletionsBody(request, this.config.upstreamModel ?? this.config.name)),
    });
    // The API's own words stay out of the client's answer: they may name the gateway's account.
    if (!response.ok || response.body === null)
      throw new EngineError(errorKindOf(response.status), `The API answered ${response.status}.`);
    // Taken on: the client's stream opens now, before the prefill; a refusal above kept its real status.
    events.next(ACCEPTED);

    let usage: TokenUsage = ZERO_USAGE;
    let finishReason: FinishReason | undefined;
    let prefilled = false;
    for await (const { data } of response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream())) {
      if (data === '[DONE]') break;
      const chunk = parseChunk(data);
      // The first chunk ends the prefill.
      if (!prefilled) {
        prefilled = true;
        events.next({
          type: 'ack',
          usage,
          timings: makeTimings({ promptN: 0, promptMs: performance.now() - started, predictedN: 0, predictedMs: 0 }),
        });
      }
      if (chunk.usage) usage = usageOf(chunk.usage);
      const choice = chunk.choices?.[0];
      for (const event of deltaEvents(choice?.delta)) events.next(event);
      if (choice?.finish_reason)
        finishReason = FINISH_REASONS.has(choice.finish_reason) ? (choice.finish_reason as FinishReason) : 'stop';
    }
    if (finishReason === undefined)
      throw new EngineError('upstream', 'The API ended its stream before the answer did.');
    events.next({ type: 'done', finishReason, usage });
  }
}

function parseChunk(data: string): ChatChunk {
  try {
    return JSON.parse(data) as ChatChunk;
  } catch {
    throw new EngineError('upstream', 'The API sent an event that is not JSON.');
  }
}

function deltaEvents(delta: ChunkDelta | undefined): EngineEvent[] {
  const events: EngineEvent[] = [];
  if (delta?.reasoning_content) events.push({ type: 'reasoning', text: delta.reasoning_content });
  if (delta?.content) events.push({ type: 'text', text: delta.content });
  for (const call of delta?.tool_calls ?? []) {
    events.push({
      type: 'tool_call',
      index: call.index,
      id: call.id,
      name: call.function?.name,
      arguments: call.function?.arguments ?? '',
    });
  }
  return events;
}

function usageOf(usage: NonNullable<ChatChunk['usage']>): TokenUsage {
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** A refused key or a broken API is the gateway's failure, not the client's request. */
function errorKindOf(status: number): EngineErrorKind {
  if (status === 429 || status === 503) return 'overloaded';
  if (status === 400 || status === 422) return 'invalid_request';
  return 'upstream';
}
