import type { ChatMessage, GenerationRequest } from '../../engine/generation-request.js';
import { ringPosition } from './hash-ring.js';

/** How much of a prompt's start the affinity key reads. */
export interface PrefixKeyLimits {
  /** Characters of what precedes the first user turn: system / developer prompt, then tools. */
  leadChars: number;
  /** Characters of the first user turn. */
  firstTurnChars: number;
}

/**
 * Long enough to tell apart the system prompts and first turns of different conversations, short
 * enough that hashing costs microseconds even for an agent sending tens of kilobytes of tools.
 * The first turn has its own budget, so that conversations behind one long system prompt still
 * spread over the fleet.
 */
export const PREFIX_KEY_LIMITS: PrefixKeyLimits = { leadChars: 8192, firstTurnChars: 2048 };

/**
 * The start of the prompt as a chat template renders it, which every turn of one conversation
 * repeats: the messages before the first user turn (system and developer prompts), the tools, and
 * the first user turn, each part cut to its budget. Later turns are left out, so turn 1 and turn 9
 * of a conversation have the same key.
 */
export function prefixAffinityText(request: GenerationRequest, limits: PrefixKeyLimits = PREFIX_KEY_LIMITS): string {
  const firstUser = request.messages.findIndex((message) => message.role === 'user');
  const lead = new BoundedText(limits.leadChars);
  for (const message of firstUser === -1 ? request.messages : request.messages.slice(0, firstUser)) {
    if (lead.full) break;
    lead.add(`<${message.role}>`, ...renderedPieces(message));
  }
  for (const tool of request.tools) {
    if (lead.full) break;
    lead.add('<tool>', JSON.stringify(tool));
  }
  const turn = new BoundedText(limits.firstTurnChars);
  if (firstUser !== -1) turn.add('<user>', ...renderedPieces(request.messages[firstUser]));
  return `${lead.text}\u0000${turn.text}`;
}

/** The request's position on the replicas' hash ring. */
export function prefixAffinityPosition(request: GenerationRequest, limits?: PrefixKeyLimits): number {
  return ringPosition(prefixAffinityText(request, limits));
}

/** A message's content in pieces, each cut on its own (an image's data URL may be megabytes). */
function renderedPieces(message: ChatMessage): string[] {
  switch (message.role) {
    case 'user':
      return message.content.flatMap((part) =>
        part.type === 'text' ? [part.text, '\n'] : ['<image>', part.url, '\n'],
      );
    case 'assistant':
      return [message.content, ...(message.toolCalls ?? []).flatMap((call) => [`<call:${call.name}>`, call.arguments])];
    case 'system':
    case 'tool':
      return [message.content];
  }
}

/** Pieces appended up to a budget of characters; what does not fit is cut off. */
class BoundedText {
  text = '';

  constructor(private readonly budget: number) {}

  get full(): boolean {
    return this.text.length >= this.budget;
  }

  add(...pieces: string[]): void {
    for (const piece of pieces) {
      const room = this.budget - this.text.length;
      if (room <= 0) return;
      this.text += piece.length <= room ? piece : piece.slice(0, room);
    }
  }
}
