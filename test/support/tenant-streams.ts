import { postStream, unpooledAgent, type StreamOutcome } from './http-stream.js';
import { words } from './open-stream.js';
import { CHAT } from './protocol-streams.js';

/** One chat stream of a tenant's key, named for the test. */
export interface KeyedStream {
  name: string;
  key: string;
}

/**
 * The order in which a contended model (one slot) admitted streams: `first` are sent and
 * accepted (each got its opening frame: the first one runs, the rest wait; a waiting stream's
 * head leaves at its first keep-alive, so the gateway needs a short `keepalive.intervalMs`), then
 * `then` are sent. A stream's first content marks its admission. Resolves once all have ended.
 */
export async function admissionOrder(
  url: string,
  model: string,
  first: KeyedStream[],
  then: KeyedStream[],
  wordsEach = 12,
): Promise<string[]> {
  const agent = unpooledAgent();
  const order: string[] = [];
  const send = ({ name, key }: KeyedStream) => {
    let opened!: () => void;
    const accepted = new Promise<void>((resolve) => (opened = resolve));
    let began = false;
    const outcome = postStream(url, CHAT.path, CHAT.body(model, words(wordsEach)), {
      agent,
      headers: { authorization: `Bearer ${key}` },
      onFrame: (frame) => {
        opened();
        if (!began && CHAT.isContent(frame)) {
          began = true;
          order.push(name);
        }
      },
      timeoutMs: 60_000,
    });
    return { accepted: Promise.race([accepted, outcome.then(() => undefined)]), outcome };
  };
  const earlier = [];
  // One after the other, so that their arrival order is known.
  for (const stream of first) {
    const sent = send(stream);
    await sent.accepted;
    earlier.push(sent.outcome);
  }
  const later = then.map(send);
  const outcomes: StreamOutcome[] = await Promise.all([...earlier, ...later.map((sent) => sent.outcome)]);
  const failed = outcomes.find((outcome) => outcome.status !== 200 || outcome.end !== 'server');
  if (failed) throw new Error(`a stream failed: ${failed.status} ${failed.end} ${failed.body}`);
  return order;
}
