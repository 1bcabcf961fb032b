import { Redis, ReplyError } from 'ioredis';
import { storeUnavailable } from './event-log-rules.js';
import { SCRIPT_ERROR_MARK } from './redis-response-scripts.js';

/**
 * One connection of the Redis response store. No command waits for a connection or is sent again
 * after a reconnect, and each fails after `timeoutMs`: a call on a Redis that is down or stuck
 * rejects at once or within that time, with `unavailable`.
 */
export class RedisConnection {
  readonly client: Redis;
  private readonly firstReady: Promise<void>;
  private everReady = false;
  /** Its first attempt failed: nothing waits for it to come up (callers fail at once). */
  private everFailed = false;

  constructor(
    url: string,
    connectionName: string,
    private readonly timeoutMs: number,
    private readonly isClosed: () => boolean,
    onError: (error: Error) => void,
  ) {
    this.client = new Redis(url, {
      connectionName,
      // No offline queue, no resending after a reconnect, no retries: a command runs now or fails.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      autoResubscribe: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      retryStrategy: (attempt: number) => Math.min(attempt * 50, 500),
      // A Redis that stops answering (host gone, no reset) is dropped and reconnected.
      socketTimeout: Math.max(5_000, timeoutMs * 10),
    });
    this.client.on('error', (error: Error) => {
      this.everFailed = true;
      onError(error);
    });
    this.firstReady = new Promise((resolve) => this.client.once('ready', () => resolve()));
    this.client.once('ready', () => (this.everReady = true));
  }

  /** Runs one command now, or fails at once when the connection is not up; any failure is `unavailable`, but a script's own refusal. */
  async send<T>(command: () => Promise<T>): Promise<T> {
    if (this.isClosed()) throw storeUnavailable(new Error('the store was closed'));
    await this.ready();
    if (this.client.status !== 'ready')
      throw storeUnavailable(new Error(`Redis is not connected (${this.client.status})`));
    try {
      return await command();
    } catch (error) {
      const message = error instanceof ReplyError ? (error as Error).message : '';
      if (message.includes(SCRIPT_ERROR_MARK))
        throw new Error(message.slice(message.indexOf(SCRIPT_ERROR_MARK) + SCRIPT_ERROR_MARK.length).trim(), {
          cause: error,
        });
      throw storeUnavailable(error);
    }
  }

  /** Until the connection is first up, a call waits for it (within the timeout); once it was up, or failed, never. */
  private async ready(): Promise<void> {
    if (this.everReady || this.everFailed || !['wait', 'connecting', 'connect'].includes(this.client.status)) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.firstReady, new Promise((resolve) => (timer = setTimeout(resolve, this.timeoutMs)))]);
    clearTimeout(timer);
  }
}
