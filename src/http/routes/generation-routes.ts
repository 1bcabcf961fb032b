import { Inject, Injectable } from '@nestjs/common';
import { merge, type Observable } from 'rxjs';
import { GatewayConfig } from '../../config/gateway-config.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import { GenerationService } from '../../generation/generation.service.js';
import { MessagesRequestDto } from '../../protocols/anthropic-messages/messages-request.dto.js';
import { MESSAGES_PROTOCOL } from '../../protocols/anthropic-messages/messages-protocol.js';
import { CHAT_PROTOCOL } from '../../protocols/openai-chat/chat-protocol.js';
import { ChatCompletionRequestDto } from '../../protocols/openai-chat/chat-request.dto.js';
import { ReasoningCipher } from '../../protocols/openai-responses/reasoning-cipher.js';
import { RESPONSES_PROTOCOL } from '../../protocols/openai-responses/responses-protocol.js';
import { ResponsesRequestDto } from '../../protocols/openai-responses/responses-request.dto.js';
import type { GenerationBody, ProtocolDescriptor, ProtocolSettings } from '../../protocols/protocol-descriptor.js';
import { responseObject, type ResponseEnvelope } from '../../protocols/openai-responses/response-object.js';
import type { Caller } from '../../auth/caller.js';
import { Callers } from '../../auth/callers.js';
import { KeyLimiter } from '../../auth/key-limiter.js';
import { BackgroundRuns } from '../../stored-responses/background-runs.js';
import type { ResponseObject } from '../../stored-responses/response-store.js';
import { storedResponsesProtocol } from '../../stored-responses/stored-responses-protocol.js';
import { StoredResponses, type PreparedResponse } from '../../stored-responses/stored-responses.js';
import { afterPromise } from '../../streaming/after-promise.js';
import { StreamResponder } from '../streaming/stream-responder.js';
import type { GenerationExchange, GenerationRoute } from './generation-pipeline.js';

/**
 * The three generation routes, served by one handler (`serve`) that their protocol descriptors
 * drive; mountGenerationRoutes puts them on Fastify with the guards, validation, hooks and error
 * answer around them (generation-pipeline.ts).
 */
@Injectable()
export class GenerationRoutes {
  readonly routes: readonly GenerationRoute[];
  private readonly settings: ProtocolSettings;

  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
    @Inject(StoredResponses) private readonly stored: StoredResponses,
    @Inject(BackgroundRuns) private readonly backgroundRuns: BackgroundRuns,
    @Inject(KeyLimiter) private readonly limiter: KeyLimiter,
    @Inject(Callers) private readonly callers: Callers,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    this.settings = { reasoningCipher: ReasoningCipher.fromSecret(config.responses.encryptionKey) };
    this.routes = [
      route({ protocol: CHAT_PROTOCOL, body: ChatCompletionRequestDto, handle: (body, exchange) => this.serve(CHAT_PROTOCOL, body, exchange) }),
      route({ protocol: RESPONSES_PROTOCOL, body: ResponsesRequestDto, handle: (body, exchange) => this.responses(body, exchange) }),
      route({ protocol: MESSAGES_PROTOCOL, body: MessagesRequestDto, handle: (body, exchange) => this.serve(MESSAGES_PROTOCOL, body, exchange) }),
    ];
  }

  /**
   * Responses reads the stored state a request names first (a refusal is a 400 or 503 before
   * anything runs), then serves it as a stream, a body, or a background run.
   */
  private responses(request: ResponsesRequestDto, exchange: GenerationExchange): Observable<EngineEvent> {
    if (!this.stored.enabled) return this.serve(RESPONSES_PROTOCOL, request, exchange);
    return afterPromise(
      () => this.stored.prepare(request, this.stored.scopeOf(exchange.request.headers)),
      (prepared) => {
        const protocol = storedResponsesProtocol(prepared, this.stored);
        return prepared.keeping.background ? this.runInBackground(protocol, prepared, request, exchange) : this.serve(protocol, request, exchange);
      },
    );
  }

  /**
   * A background response: accepted like any request (a refusal is its status), kept as
   * `queued`, then run with nobody connected. The client gets the response at once, or follows
   * its events (hanging up stops following, not the run).
   */
  private runInBackground(
    protocol: ProtocolDescriptor<ResponsesRequestDto, ResponseEnvelope>,
    prepared: PreparedResponse,
    body: ResponsesRequestDto,
    exchange: GenerationExchange,
  ): Observable<EngineEvent> {
    const { reply, telemetry } = exchange;
    const caller = this.callerOf(exchange);
    const request = protocol.decode(body, this.settings);
    const names = protocol.fieldNames(body);
    const start = async () => {
      // A background run always streams: its events go to the log, whoever follows them.
      const accepted = await this.generations.accept(request, { telemetry, stream: true, names, caller, background: true });
      let envelope: ResponseEnvelope;
      let response: ResponseObject;
      try {
        envelope = protocol.identify(body, this.settings);
        response = responseObject(envelope, 'queued', []) as ResponseObject;
        await this.stored.open(prepared, response);
      } catch (error) {
        // Not kept, so not run: its admission place goes back.
        accepted.abandon();
        throw error;
      }
      // The plain encoder: the run keeps each state itself (the kept descriptor's encoder would keep the end again).
      const encode = RESPONSES_PROTOCOL.encode(body, envelope, undefined);
      // The API key's stream slot goes with the run, not with this answer.
      const onEnd = this.limiter.detachStreamSlot(reply.raw);
      const run = this.backgroundRuns.start({ response, events$: accepted.events$, encode, telemetry, scope: prepared.scope, onEnd });
      await run.opened;
      return { response, run };
    };
    // The request ends, for the hooks, when its run does: they see the run's events.
    return afterPromise(start, ({ response, run }) =>
      merge(
        body.stream === true
          ? this.responder.sseFrames(reply, this.stored.follow(prepared.scope, response.id, -1))
          : this.responder.sendJson(reply, response),
        run.events$,
      ),
    );
  }

  /**
   * Decodes the body, has the generation accepted (refusals throw here, before any answer), and
   * answers as one JSON body or as an SSE stream in the protocol's shapes. Returns the engine
   * events, for the hooks; answering is a side effect of their subscription.
   */
  private serve<Body extends GenerationBody, Identity>(
    protocol: ProtocolDescriptor<Body, Identity>,
    body: Body,
    exchange: GenerationExchange,
  ): Observable<EngineEvent> {
    const { reply, telemetry } = exchange;
    const caller = this.callerOf(exchange);
    const request = protocol.decode(body, this.settings);
    const names = protocol.fieldNames(body);
    const stream = body.stream === true;
    // Accepted (limits and the queue checked) before a prompt is counted: a refusal costs no count.
    return afterPromise(
      () => this.generations.accept(request, { telemetry, stream, names, caller }),
      (accepted) => {
        const identity = protocol.identify(body, this.settings);
        if (!stream) return this.responder.json(reply, accepted, (result) => protocol.toBody(result, identity), protocol.dialect);
        const open = (promptTokens: number | undefined) => this.responder.sse(reply, accepted, protocol.encode(body, identity, promptTokens));
        if (!protocol.countsPromptTokens) return open(undefined);
        return afterPromise(() => this.generations.countPromptTokens(request, names, caller), open);
      },
    );
  }

  /** The caller the API-key guard identified, its tenant written into the telemetry. */
  private callerOf({ request, telemetry }: GenerationExchange): Caller {
    const caller = this.callers.of(request);
    telemetry.tenant = caller.tenant.name;
    return caller;
  }
}

/** A route of a given body class, among routes of any (the pipeline hands each its own DTO). */
function route<Body extends object>(declared: GenerationRoute<Body>): GenerationRoute {
  return declared as unknown as GenerationRoute;
}
