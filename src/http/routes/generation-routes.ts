import { Inject, Injectable } from '@nestjs/common';
import { defer, mergeMap, type Observable } from 'rxjs';
import { GatewayConfig } from '../../config/gateway-config.js';
import type { EngineEvent } from '../../engine/engine-event.js';
import { GenerationService } from '../../generation/generation.service.js';
import { attachTelemetry, telemetryOf } from '../../observability/request-telemetry.js';
import { MessagesRequestDto } from '../../protocols/anthropic-messages/messages-request.dto.js';
import { MESSAGES_PROTOCOL } from '../../protocols/anthropic-messages/messages-protocol.js';
import { CHAT_PROTOCOL } from '../../protocols/openai-chat/chat-protocol.js';
import { ChatCompletionRequestDto } from '../../protocols/openai-chat/chat-request.dto.js';
import { ReasoningCipher } from '../../protocols/openai-responses/reasoning-cipher.js';
import { RESPONSES_PROTOCOL } from '../../protocols/openai-responses/responses-protocol.js';
import { ResponsesRequestDto } from '../../protocols/openai-responses/responses-request.dto.js';
import type { GenerationBody, ProtocolDescriptor, ProtocolSettings } from '../../protocols/protocol-descriptor.js';
import { StreamResponder } from '../streaming/stream-responder.js';
import { DirectBody, DirectExchange, DirectPost, type HttpExchange } from './direct-route.decorator.js';
import { validated } from './validated-body.js';

/**
 * The route of a generation API: `POST {path}`. Its telemetry, under the API's name, is attached
 * to the request on arrival, before guards and interceptors run (the generation interceptors
 * watch the requests that carry one).
 */
function ServesProtocol(protocol: Pick<ProtocolDescriptor, 'api' | 'path'>): MethodDecorator {
  return DirectPost(protocol.path, (request) => attachTelemetry(request, protocol.api));
}

/**
 * The three generation APIs, served by one handler (`serve`) that their protocol descriptors
 * drive. Each route is a method only so that its body's class is declared (Nest's pipes validate
 * the body as its parameter's type) and its metadata has a handler to sit on.
 */
@Injectable()
export class GenerationRoutes {
  private readonly settings: ProtocolSettings;

  constructor(
    @Inject(GenerationService) private readonly generations: GenerationService,
    @Inject(StreamResponder) private readonly responder: StreamResponder,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    this.settings = { reasoningCipher: ReasoningCipher.fromSecret(config.responses.encryptionKey) };
  }

  @ServesProtocol(CHAT_PROTOCOL)
  chatCompletions(@DirectBody() body: ChatCompletionRequestDto, @DirectExchange() http: HttpExchange): Observable<EngineEvent> {
    return this.serve(CHAT_PROTOCOL, validated(body, ChatCompletionRequestDto), http);
  }

  @ServesProtocol(RESPONSES_PROTOCOL)
  responses(@DirectBody() body: ResponsesRequestDto, @DirectExchange() http: HttpExchange): Observable<EngineEvent> {
    return this.serve(RESPONSES_PROTOCOL, validated(body, ResponsesRequestDto), http);
  }

  @ServesProtocol(MESSAGES_PROTOCOL)
  messages(@DirectBody() body: MessagesRequestDto, @DirectExchange() http: HttpExchange): Observable<EngineEvent> {
    return this.serve(MESSAGES_PROTOCOL, validated(body, MessagesRequestDto), http);
  }

  /**
   * Decodes the body, has the generation accepted (refusals throw here, before any answer), and
   * answers as one JSON body or as an SSE stream in the protocol's shapes. Returns the engine
   * events, for the interceptors; answering is a side effect of their subscription.
   */
  private serve<Body extends GenerationBody, Identity>(
    protocol: ProtocolDescriptor<Body, Identity>,
    body: Body,
    { request: httpRequest, reply }: HttpExchange,
  ): Observable<EngineEvent> {
    // Attached on arrival (ServesProtocol), before the interceptors that read it ran.
    const telemetry = telemetryOf(httpRequest)!;
    const request = protocol.decode(body, this.settings);
    const names = protocol.fieldNames(body);
    const stream = body.stream === true;
    // Accepted (limits and the queue checked) before a prompt is counted: a refusal costs no count.
    return defer(() => this.generations.accept(request, { telemetry, stream, names })).pipe(
      mergeMap((accepted) => {
        const identity = protocol.identify(body, this.settings);
        if (!stream) return this.responder.json(reply, accepted, (result) => protocol.toBody(result, identity), protocol.dialect);
        const open = (promptTokens: number | undefined) => this.responder.sse(reply, accepted, protocol.encode(body, identity, promptTokens));
        if (!protocol.countsPromptTokens) return open(undefined);
        return defer(() => this.generations.countPromptTokens(request, names)).pipe(mergeMap((promptTokens) => open(promptTokens)));
      }),
    );
  }
}
