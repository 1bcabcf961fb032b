import { newId, unixSeconds } from '../ids.js';
import type { ProtocolDescriptor } from '../protocol-descriptor.js';
import { decodeResponsesRequest } from './decode-responses-request.js';
import { encodeResponsesStream } from './encode-responses-stream.js';
import { toResponseBody } from './response-body.js';
import { type ResponseEnvelope, responseEnvelope } from './response-object.js';
import type { ResponsesRequestDto } from './responses-request.dto.js';

/** OpenAI Responses: `POST /v1/responses`, streaming and not; stateless (nothing is stored). */
export const RESPONSES_PROTOCOL: ProtocolDescriptor<ResponsesRequestDto, ResponseEnvelope> = {
  api: 'responses',
  path: '/v1/responses',
  dialect: 'openai',
  countsPromptTokens: false,
  fieldNames: () => ({ maxTokens: 'max_output_tokens', messages: 'input' }),
  decode: (body, { reasoningCipher }) => decodeResponsesRequest(body, reasoningCipher),
  identify: (body, { reasoningCipher }) => responseEnvelope(newId('resp_'), unixSeconds(), body, reasoningCipher),
  toBody: (result, envelope) => toResponseBody(result, envelope),
  encode: (_body, envelope) => encodeResponsesStream(envelope),
};
