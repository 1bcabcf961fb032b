import { postStream, unpooledAgent, type StreamOutcome } from './http-stream.js';
import { CHAT } from './protocol-streams.js';

/** A prompt of `count` distinct words (the stub answers one word per token). */
export const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index}`).join(' ');

/** A chat stream that has begun: its first content arrived; `ended()` tells whether it has finished since. */
export interface OpenStream {
  outcome: Promise<StreamOutcome>;
  ended: () => boolean;
}

/** Starts a chat stream of `model` echoing `prompt` and resolves once its first content arrived. */
export async function openChatStream(baseUrl: string, model: string, prompt: string): Promise<OpenStream> {
  let firstContent!: () => void;
  const contentBegan = new Promise<void>((resolve) => (firstContent = resolve));
  const outcome = postStream(baseUrl, CHAT.path, CHAT.body(model, prompt), {
    agent: unpooledAgent(),
    onFrame: (frame) => {
      if (CHAT.isContent(frame)) firstContent();
    },
    timeoutMs: 60_000,
  });
  let finished = false;
  void outcome.then(
    () => (finished = true),
    () => (finished = true),
  );
  await Promise.race([contentBegan, outcome]);
  return { outcome, ended: () => finished };
}
