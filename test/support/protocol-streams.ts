import type { Frame } from './http-stream.js';

/**
 * What the reliability tests need to know of each API's stream: where to post, a streaming body,
 * and how to recognise a heartbeat, real output and a valid ending on the wire.
 */
export interface ProtocolStream {
  api: 'chat' | 'messages' | 'responses';
  path: string;
  body: (model: string, text: string) => Record<string, unknown>;
  isHeartbeat: (frame: Frame) => boolean;
  isContent: (frame: Frame) => boolean;
  /** The text of a content frame. */
  contentOf: (frame: Frame) => string;
  /** The stream ended as the protocol ends a successful stream. */
  endedWell: (frames: Frame[]) => boolean;
  /** The stream ended with the protocol's in-band error frame; returns its message. */
  errorMessage: (frames: Frame[]) => string | undefined;
}

const events = (frames: Frame[]) =>
  frames.filter((frame): frame is Extract<Frame, { kind: 'event' }> => frame.kind === 'event');
const json = (frame: Frame) => (frame.kind === 'event' && frame.data !== '[DONE]' ? JSON.parse(frame.data) : undefined);

export const CHAT: ProtocolStream = {
  api: 'chat',
  path: '/v1/chat/completions',
  body: (model, text) => ({ model, stream: true, messages: [{ role: 'user', content: text }] }),
  isHeartbeat: (frame) => {
    const choice = json(frame)?.choices?.[0];
    return choice !== undefined && Object.keys(choice.delta).length === 0 && choice.finish_reason === null;
  },
  isContent: (frame) => Boolean(json(frame)?.choices?.[0]?.delta?.content),
  contentOf: (frame) => json(frame)?.choices?.[0]?.delta?.content ?? '',
  endedWell: (frames) => {
    const all = events(frames);
    return all.at(-1)?.data === '[DONE]' && all.some((frame) => json(frame)?.choices?.[0]?.finish_reason === 'stop');
  },
  errorMessage: (frames) => {
    const all = events(frames);
    if (all.at(-1)?.data !== '[DONE]') return undefined;
    return json(all.at(-2)!)?.error?.message;
  },
};

export const MESSAGES: ProtocolStream = {
  api: 'messages',
  path: '/v1/messages',
  body: (model, text) => ({ model, stream: true, max_tokens: 4096, messages: [{ role: 'user', content: text }] }),
  isHeartbeat: (frame) => frame.kind === 'event' && frame.event === 'ping',
  isContent: (frame) => frame.kind === 'event' && frame.event === 'content_block_delta',
  contentOf: (frame) => json(frame)?.delta?.text ?? '',
  endedWell: (frames) => {
    const all = events(frames);
    return all.at(-1)?.event === 'message_stop' && all.some((frame) => json(frame)?.delta?.stop_reason === 'end_turn');
  },
  errorMessage: (frames) => {
    const last = events(frames).at(-1);
    return last?.event === 'error' ? json(last)?.error?.message : undefined;
  },
};

export const RESPONSES: ProtocolStream = {
  api: 'responses',
  path: '/v1/responses',
  body: (model, text) => ({ model, stream: true, input: text }),
  isHeartbeat: (frame) =>
    frame.kind === 'event' && frame.event === 'response.in_progress' && json(frame)?.sequence_number > 1,
  isContent: (frame) => frame.kind === 'event' && frame.event === 'response.output_text.delta',
  contentOf: (frame) => json(frame)?.delta ?? '',
  endedWell: (frames) => events(frames).at(-1)?.event === 'response.completed',
  errorMessage: (frames) => {
    const last = events(frames).at(-1);
    return last?.event === 'response.failed' ? json(last)?.response?.error?.message : undefined;
  },
};

export const PROTOCOLS: readonly ProtocolStream[] = [CHAT, MESSAGES, RESPONSES];
