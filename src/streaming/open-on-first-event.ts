import type { Observer } from 'rxjs';
import type { StreamEvent } from './stream-event.js';

/**
 * An encoder's observer that sends the stream's opening frames (`open`) with its first event, or
 * before its end when no event came. Opening at the first event rather than on subscription lets
 * the response head wait until the engine has taken the request on, or the first keep-alive is
 * due, so that a refusal before that gets its real HTTP status (see StreamResponder.sse).
 */
export function openOnFirstEvent(
  open: (first: StreamEvent | undefined) => void,
  observer: Observer<StreamEvent>,
): Observer<StreamEvent> {
  let opened = false;
  const openOnce = (first?: StreamEvent) => {
    if (opened) return;
    opened = true;
    open(first);
  };
  return {
    next: (event) => {
      openOnce(event);
      observer.next(event);
    },
    error: (error: unknown) => {
      openOnce();
      observer.error(error);
    },
    complete: () => {
      openOnce();
      observer.complete();
    },
  };
}
