import type { ConversationMessage } from './gateway-api.js';

/**
 * The history sent with every turn (multi-turn chat). Only text is kept: reasoning is not sent
 * back, and tool calls are shown but never run, so they are not part of the history either.
 */
export class Conversation {
  private readonly history: ConversationMessage[] = [];

  get messages(): readonly ConversationMessage[] {
    return this.history;
  }

  /** The history with the next user message, for the request. */
  withUser(text: string): ConversationMessage[] {
    return [...this.history, { role: 'user', content: text }];
  }

  /**
   * Records a finished or stopped turn (a failed one is not recorded). A turn that produced no
   * text is forgotten, so the user can ask again without a dangling question in the history.
   */
  record(userText: string, answerText: string): void {
    if (answerText.length === 0) return;
    this.history.push({ role: 'user', content: userText }, { role: 'assistant', content: answerText });
  }
}
