import { Inject, Injectable } from '@nestjs/common';
import { EMPTY, merge, type Observable } from 'rxjs';
import type { EngineEvent } from '../../engine/engine-event.js';
import { GenerationService, type AcceptedGeneration } from '../../generation/generation.service.js';
import { MessagesRequestDto } from '../../protocols/anthropic-messages/messages-request.dto.js';
import { MESSAGES_PROTOCOL } from '../../protocols/anthropic-messages/messages-protocol.js';
import { CHAT_PROTOCOL } from '../../protocols/openai-chat/chat-protocol.js';
import { ChatCompletionRequestDto } from '../../protocols/openai-chat/chat-request.dto.js';
import { ReasoningCipher } from '../../protocols/openai-responses/reasoning-cipher.js';
import { COMPLETIONS_PROTOCOL, completionsProtocol } from '../../protocols/openai-completions/completions-protocol.js';
import { CompletionsRequestDto } from '../../protocols/openai-completions/completions-request.dto.js';
import { RESPONSES_PROTOCOL } from '../../protocols/openai-responses/responses-protocol.js';
import { ResponsesRequestDto } from '../../protocols/openai-responses/responses-request.dto.js';
import type { GenerationBody, ProtocolDescriptor, ProtocolSettings } from '../../protocols/protocol-descriptor.js';
import { responseObject, type ResponseEnvelope } from '../../protocols/openai-responses/response-object.js';
import type { Caller } from '../../auth/caller.js';
import { Callers } from '../../auth/callers.js';
import { KeyLimiter } from '../../auth/key-limiter.js';
import { BackgroundRuns, type StartedRun } from '../../stored-responses/background-runs.js';
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
    @Inject(ReasoningCipher) reasoningCipher: ReasoningCipher,
  ) {
    this.settings = { reasoningCipher };
    this.routes = [
      route({
        protocol: CHAT_PROTOCOL,
        body: ChatCompletionRequestDto,
        handle: (body, exchange) => this.serve(CHAT_PROTOCOL, body, exchange),
      }),
      route({
        protocol: RESPONSES_PROTOCOL,
        body: ResponsesRequestDto,
        handle: (body, exchange) => this.responses(body, exchange),
      }),
      route({
        protocol: MESSAGES_PROTOCOL,
        body: MessagesRequestDto,
        handle: (body, exchange) => this.serve(MESSAGES_PROTOCOL, body, exchange),
      }),
      route({
        protocol: COMPLETIONS_PROTOCOL,
        body: CompletionsRequestDto,
        handle: (body, exchange) => this.serve(completionsProtocol(exchange.request.body), body, exchange),
      }),
    ];
  }

  /**
   * Responses reads the stored state a request names first (a refusal is a 400 or 503 before
   * anything runs), then serves it as a stream, a body, or a background run.
   */
  private responses(request: ResponsesRequestDto, exchange: GenerationExchange): Observable<EngineEvent> {
    const scope = this.stored.scopeOf(exchange.request.headers);
    // Reasoning sealed for one API key opens only for that key.
    const settings: ProtocolSettings = { reasoningCipher: this.settings.reasoningCipher.forKey(scope.owner) };
    if (!this.stored.enabled) return this.serve(RESPONSES_PROTOCOL, request, exchange, settings);
    return afterPromise(
      () => this.stored.prepare(request, scope),
      (prepared) => {
        const protocol = storedResponsesProtocol(prepared, this.stored);
        return prepared.keeping.background
          ? this.runInBackground(protocol, prepared, request, exchange, settings)
          : this.serve(protocol, request, exchange, settings);
      },
    );
  }

  /**
   * A background response: accepted like any request (a refusal is its status), kept as
   * `queued`, then run with nobody connected. The client gets the response at once, or follows
   * its events (hanging up stops following, not the run). The API key's stream slot goes with
   * the run: it is taken off the answer before anything is awaited, since a client that resets
   * meanwhile would otherwise give back, on its answer's close, the slot its run goes on using.
   */
  private runInBackground(
    protocol: ProtocolDescriptor<ResponsesRequestDto, ResponseEnvelope>,
    prepared: PreparedResponse,
    body: ResponsesRequestDto,
    exchange: GenerationExchange,
    settings: ProtocolSettings,
  ): Observable<EngineEvent> {
    const { reply, telemetry } = exchange;
    const caller = this.callerOf(exchange);
    const releaseSlot = this.limiter.detachStreamSlot(reply.raw);
    const start = async (): Promise<{ response: ResponseObject; run: StartedRun } | undefined> => {
      let accepted: AcceptedGeneration | undefined;
      let envelope: ResponseEnvelope;
      let response: ResponseObject;
      try {
        // A background run always streams: its events go to the log, whoever follows them.
        accepted = await this.generations.accept(protocol.decode(body, settings), {
          telemetry,
          stream: true,
          names: protocol.fieldNames(body),
          caller,
          background: true,
        });
        // A client already gone (it reset while a store answered) gets no run: nobody knows its id.
        if (reply.raw.destroyed) {
          accepted.abandon();
          releaseSlot();
          return undefined;
        }
        envelope = protocol.identify(body, settings);
        response = responseObject(envelope, 'queued', []) as ResponseObject;
        await this.stored.open(prepared, response);
      } catch (error) {
        // Not kept, so not run: its admission place and its slot go back.
        accepted?.abandon();
        releaseSlot();
        throw error;
      }
      // The plain encoder: the run keeps each state itself (the kept descriptor's encoder would keep the end again).
      const encode = RESPONSES_PROTOCOL.encode(body, envelope, undefined);
      const run = this.backgroundRuns.start({
        response,
        events$: accepted.events$,
        encode,
        telemetry,
        scope: prepared.scope,
        onEnd: releaseSlot,
      });
      await run.opened;
      return { response, run };
    };
    // The request ends, for the hooks, when its run does: they see the run's events.
    return afterPromise(start, (value) => {
      if (value === undefined) return EMPTY;
      const { response, run } = value;
      return merge(
        body.stream === true
          ? this.responder.sseFrames(reply, this.stored.follow(prepared.scope, response.id, -1))
          : this.responder.sendJson(reply, response),
        run.events$,
      );
    });
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
    settings = this.settings,
  ): Observable<EngineEvent> {
    const { reply, telemetry } = exchange;
    const caller = this.callerOf(exchange);
    const request = protocol.decode(body, settings);
    const names = protocol.fieldNames(body);
    const stream = body.stream === true;
    // Accepted (limits and the queue checked) before a prompt is counted: a refusal costs no count.
    return afterPromise(
      () => this.generations.accept(request, { telemetry, stream, names, caller }),
      (accepted) => {
        const identity = protocol.identify(body, settings);
        if (!stream)
          return this.responder.json(reply, accepted, (result) => protocol.toBody(result, identity), protocol.dialect);
        const open = (promptTokens: number | undefined) =>
          this.responder.sse(reply, accepted, protocol.encode(body, identity, promptTokens));
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
