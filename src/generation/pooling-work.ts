import { Observable } from 'rxjs';
import { EngineError } from '../engine/engine-error.js';
import type { EngineEvent, TokenUsage } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';
import type { PoolingContext } from '../engine/pooling.js';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * A pooling call (engine/pooling.ts) as the engine events every request is observed through:
 * `accepted` and `done` (its usage as prompt tokens) once the whole answer came, handed to
 * `onResult` first. Cold, as `generate` is: subscribing calls the engine, unsubscribing aborts it.
 */
export function poolingWork<Result extends { usage: TokenUsage }>(
  call: (context: PoolingContext) => Promise<Result>,
  traceHeaders: Record<string, string> | undefined,
  onResult: (result: Result) => void,
): Observable<EngineEvent> {
  return new Observable<EngineEvent>((subscriber) => {
    const abort = new AbortController();
    call({ signal: abort.signal, traceHeaders }).then(
      (result) => {
        if (subscriber.closed) return;
        onResult(result);
        subscriber.next({ type: 'accepted', usage: result.usage });
        subscriber.next({ type: 'done', finishReason: 'stop', usage: result.usage });
        subscriber.complete();
      },
      (error: unknown) => {
        if (subscriber.closed) return;
        subscriber.error(
          error instanceof GatewayError
            ? error
            : new EngineError('internal', 'The engine failed to serve this request.', { cause: error }),
        );
      },
    );
    return () => abort.abort(new Error('The client went away.'));
  });
}

/**
 * The generation a pooling request stands for in admission and limits: its texts as one user
 * message (the fair queue's estimate reads them), no output asked for.
 */
export function poolingGenerationRequest(model: string, texts: readonly string[]): GenerationRequest {
  return {
    model,
    messages: [{ role: 'user', content: texts.map((text) => ({ type: 'text', text })) }],
    tools: [],
    toolChoice: 'none',
    parallelToolCalls: false,
    sampling: { maxTokens: 0, stop: [] },
  };
}
