import { Observable } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import { eventsDropped, firstWanted, noEventLog, storeUnavailable } from './event-log-rules.js';
import type { ChannelListener } from './redis-channels.js';
import type { StoredEvent } from './response-store.js';

/** One read of a response's event log: its state, and up to a batch of events from where asked. */
export interface EventLogPage {
  next: number;
  final: boolean;
  events: StoredEvent[];
}

/** What following a log needs of the Redis store. */
export interface FollowedLog {
  readBatch: number;
  /** The page from sequence `next` on; undefined when the response has no log. */
  read(next: number): Promise<EventLogPage | undefined>;
  listen(listener: ChannelListener): Promise<void>;
  unlisten(listener: ChannelListener): void;
  reportFailure(error: Error): void;
}

/**
 * A response's events after `after`, as they are appended, until its final one. It subscribes to
 * the response's channel before it reads, so nothing appended in between is missed; each notice
 * makes it read until caught up (once more when one comes meanwhile).
 */
export function followEventLog(log: FollowedLog, id: string, after: number): Observable<StoredEvent> {
  return new Observable<StoredEvent>((subscriber) => {
    let next = firstWanted(after);
    let reading = false;
    let again = false;
    let stopped = false;
    const fail = (error: GatewayError) => {
      if (stopped) return;
      stopped = true;
      if (error.kind === 'unavailable') log.reportFailure(error);
      subscriber.error(error);
    };
    // Reads until caught up; a notice that comes meanwhile makes it read once more.
    const read = async (): Promise<void> => {
      if (stopped) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          for (;;) {
            const page = await log.read(next);
            if (stopped) return;
            if (page === undefined) return fail(noEventLog(id));
            const firstFound = page.events[0]?.sequence ?? page.next;
            if (firstFound > next) return fail(eventsDropped(next - 1, firstFound));
            for (const event of page.events) {
              next = event.sequence + 1;
              subscriber.next(event);
              if (stopped) return;
            }
            if (page.final && next >= page.next) {
              stopped = true;
              return subscriber.complete();
            }
            if (page.events.length < log.readBatch) break;
          }
        } while (again);
      } catch (error) {
        fail(error instanceof GatewayError ? error : storeUnavailable(error));
      } finally {
        reading = false;
      }
    };
    const listener: ChannelListener = {
      notify: () => void read(),
      lost: (error) => fail(storeUnavailable(error)),
    };
    log.listen(listener).then(
      () => read(),
      (error: unknown) => fail(error instanceof GatewayError ? error : storeUnavailable(error)),
    );
    return () => {
      stopped = true;
      log.unlisten(listener);
    };
  });
}
