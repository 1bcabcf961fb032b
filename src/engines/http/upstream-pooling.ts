import { ZERO_USAGE, type TokenUsage } from '../../engine/engine-event.js';
import type { EngineError } from '../../engine/engine-error.js';
import type {
  EmbeddingRequest,
  EmbeddingResult,
  PoolingContext,
  PoolingPassRequest,
  PoolingPassResult,
} from '../../engine/pooling.js';
import type { Replica, ReplicaPool } from './replica-pool.js';
import type { UpstreamConnection } from './upstream-connection.js';
import { UpstreamError, upstreamProtocolError } from './upstream-error.js';

/** What a pooling call asks of its HTTP engine: to judge a failed replica, and to word a fleet that failed. */
export interface PoolingJudge {
  recordFailure(replica: Replica, error: unknown): void;
  exhausted(tried: number, lastError: UpstreamError | undefined): EngineError;
}

/**
 * The pooling APIs on an upstream fleet: one JSON request, answered whole, so a failure another
 * replica may not have (refused connection, 5xx, a broken answer) is retried on a replica not tried
 * yet; the client sees only the answer, or the last failure.
 */
export class UpstreamPooling {
  constructor(
    private readonly pool: ReplicaPool,
    private readonly connections: ReadonlyMap<Replica, UpstreamConnection>,
    private readonly headers: Record<string, string>,
    private readonly upstreamModel: string,
    private readonly judge: PoolingJudge,
  ) {}

  /** `/embeddings`: the client's fields (and those Gantry does not read), under the upstream's model name. */
  async embed(request: EmbeddingRequest, context: PoolingContext): Promise<EmbeddingResult> {
    const answer = await this.call(
      'embeddings',
      {
        ...request.extra,
        model: this.upstreamModel,
        input: request.input,
        encoding_format: request.encodingFormat,
        ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }),
        ...(request.user === undefined ? {} : { user: request.user }),
      },
      context,
    );
    return { vectors: vectorsOf(answer, request.input.length), usage: usageOf(answer) };
  }

  /** `/rerank`, `/score`: the body passed on unread, but for the model name. */
  async pass(
    route: 'rerank' | 'score',
    request: PoolingPassRequest,
    context: PoolingContext,
  ): Promise<PoolingPassResult> {
    const answer = await this.call(route, { ...request.body, model: this.upstreamModel }, context);
    return { body: answer, usage: usageOf(answer) };
  }

  private async call(
    route: string,
    body: Record<string, unknown>,
    { signal, traceHeaders }: PoolingContext,
  ): Promise<Record<string, unknown>> {
    const payload = JSON.stringify(body);
    const headers = { ...traceHeaders, ...this.headers };
    const tried = new Set<Replica>();
    let lastError: UpstreamError | undefined;
    for (;;) {
      const replica = this.pool.pick(tried);
      if (!replica) throw this.judge.exhausted(tried.size, lastError);
      tried.add(replica);
      replica.outstanding += 1;
      replica.requests += 1;
      try {
        const answer = await this.connections.get(replica)!.postJson(route, payload, headers, signal);
        this.pool.recordSuccess(replica);
        return answer;
      } catch (error) {
        if (signal.aborted) throw error;
        this.judge.recordFailure(replica, error);
        if (!(error instanceof UpstreamError) || !error.retryable) throw error;
        lastError = error;
      } finally {
        replica.outstanding -= 1;
      }
    }
  }
}

/** The answer's vectors in input order (by each item's `index`), numbers or base64 as the upstream sent them. */
function vectorsOf(answer: Record<string, unknown>, inputs: number): Array<number[] | string> {
  const data = answer.data;
  if (!Array.isArray(data) || data.length !== inputs)
    throw upstreamProtocolError(`The upstream's embeddings answer does not hold one vector per input (${inputs}).`);
  const vectors = Array.from<number[] | string>({ length: inputs });
  data.forEach((item: { index?: unknown; embedding?: unknown }, position) => {
    const index = typeof item?.index === 'number' ? item.index : position;
    const embedding = item?.embedding;
    if (index < 0 || index >= inputs || !(typeof embedding === 'string' || Array.isArray(embedding)))
      throw upstreamProtocolError("The upstream's embeddings answer holds an item that is not a vector.");
    vectors[index] = embedding as number[] | string;
  });
  return vectors;
}

function usageOf(answer: Record<string, unknown>): TokenUsage {
  const usage = answer.usage as { prompt_tokens?: unknown; total_tokens?: unknown } | undefined;
  const prompt = usage?.prompt_tokens ?? usage?.total_tokens;
  return { ...ZERO_USAGE, promptTokens: typeof prompt === 'number' ? prompt : 0 };
}
