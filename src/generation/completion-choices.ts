import { Observable, Subscription } from 'rxjs';
import { ACCEPTED, type ChoiceEnd, type EngineEvent, type TokenUsage, ZERO_USAGE } from '../engine/engine-event.js';
import type { GenerationRequest } from '../engine/generation-request.js';

/** How many choices a request asks for: a completion's prompts times its `n`; 1 for anything else. */
export function choiceCount(request: GenerationRequest): number {
  const completion = request.completion;
  if (completion === undefined) return 1;
  return (completion.prompts?.length ?? 1) * (completion.n ?? 1);
}

/**
 * One request per choice, in the API's order: prompt by prompt, `n` copies of each. A copy's seed
 * is the request's plus its place among the copies, so that seeded copies still differ.
 */
export function choiceRequests(request: GenerationRequest): GenerationRequest[] {
  const completion = request.completion!;
  const n = completion.n ?? 1;
  return (completion.prompts ?? [completion.prompt]).flatMap((prompt) =>
    Array.from({ length: n }, (_, copy): GenerationRequest => {
      const seed = request.sampling.seed;
      return {
        ...request,
        messages: [{ role: 'user', content: [{ type: 'text', text: typeof prompt === 'string' ? prompt : '' }] }],
        sampling: seed === undefined || copy === 0 ? request.sampling : { ...request.sampling, seed: seed + copy },
        completion: { ...completion, prompt, prompts: undefined, n: undefined },
      };
    }),
  );
}

/**
 * A completion's generation: its engine's, or, for several choices, one generation per choice run
 * side by side and merged into one stream of events (docs/apis.md, "Completions"). A choice's
 * text carries its index; the counters are the request's totals (a prompt counted once, however
 * many copies); `accepted` comes once every choice is accepted; one `done` ends it, when the
 * last choice ends, with how each ended. A failing choice fails the request (the others are
 * cancelled), as an unsubscribe cancels them all.
 */
export function generateCompletion(
  request: GenerationRequest,
  generate: (request: GenerationRequest) => Observable<EngineEvent>,
): Observable<EngineEvent> {
  const count = choiceCount(request);
  if (count === 1) return generate(request);
  const perPrompt = request.completion!.n ?? 1;
  const requests = choiceRequests(request);
  return new Observable<EngineEvent>((subscriber) => {
    const usages: TokenUsage[] = requests.map(() => ZERO_USAGE);
    const ends: Array<ChoiceEnd | undefined> = [];
    const accepted = new Set<number>();
    let left = count;
    const total = (): TokenUsage => totalUsage(usages, perPrompt);
    const accept = (choice: number) => {
      if (accepted.has(choice)) return;
      accepted.add(choice);
      if (accepted.size === count) subscriber.next(ACCEPTED);
    };
    const onEvent = (choice: number, event: EngineEvent) => {
      accept(choice);
      switch (event.type) {
        case 'accepted':
          return;
        case 'done': {
          usages[choice] = event.usage;
          ends[choice] = { finishReason: event.finishReason, stopSequence: event.stopSequence };
          left -= 1;
          if (left > 0) return;
          const choices = ends as ChoiceEnd[];
          subscriber.next({ ...choices[0], type: 'done', usage: total(), choices });
          subscriber.complete();
          return;
        }
        case 'ack':
          usages[choice] = event.usage;
          subscriber.next({ ...event, usage: total() });
          return;
        case 'text':
          if (event.usage !== undefined) usages[choice] = event.usage;
          subscriber.next({ ...event, choice, ...(event.usage === undefined ? {} : { usage: total() }) });
          return;
        default:
          // Completions have no reasoning or tool calls to show; a resume passes on as it is.
          subscriber.next(event);
      }
    };
    const runs = new Subscription();
    for (const [choice, choiceRequest] of requests.entries()) {
      if (subscriber.closed) break;
      runs.add(
        generate(choiceRequest).subscribe({
          next: (event) => onEvent(choice, event),
          error: (error: unknown) => subscriber.error(error),
        }),
      );
    }
    return runs;
  });
}

/** The request's usage from its choices': every choice's output, each prompt's input once (its first copy's). */
function totalUsage(usages: readonly TokenUsage[], perPrompt: number): TokenUsage {
  let promptTokens = 0;
  let cachedTokens = 0;
  let completionTokens = 0;
  let reasoningTokens = 0;
  for (const [choice, usage] of usages.entries()) {
    if (choice % perPrompt === 0) {
      promptTokens += usage.promptTokens;
      cachedTokens += usage.cachedTokens;
    }
    completionTokens += usage.completionTokens;
    reasoningTokens += usage.reasoningTokens;
  }
  return { promptTokens, cachedTokens, completionTokens, reasoningTokens };
}
