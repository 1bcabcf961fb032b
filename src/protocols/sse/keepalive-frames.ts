import type { Observable, OperatorFunction } from 'rxjs';
import type { EngineEvent } from '../../engine/engine-event.js';
import { isOutput } from '../../engine/engine-event.js';
import { heartbeat } from '../../streaming/heartbeat.js';
import { keepalive } from '../../streaming/keepalive.js';
import type { StreamEvent } from '../../streaming/stream-event.js';
import { KEEPALIVE_COMMENT, type SseFrame } from './sse-frame.js';

/** How a stream keeps its client's idle timers fed (`keepalive:` in the configuration). */
export interface KeepaliveSettings {
  mode: 'chunks' | 'comments' | 'off';
  intervalMs: number;
}

/**
 * A generation's SSE frames with the configured keep-alive: protocol heartbeats through the
 * encoder until the first output, and again while a continuation waits for its first output
 * (`chunks`), `: keep-alive` comments for the whole stream (`comments`), or none. `onBeat` is
 * told of each beat (telemetry counts them).
 */
export function keepaliveFrames(
  events$: Observable<EngineEvent>,
  encode: OperatorFunction<StreamEvent, SseFrame>,
  { mode, intervalMs }: KeepaliveSettings,
  onBeat: () => void = () => {},
): Observable<SseFrame> {
  switch (mode) {
    case 'chunks': {
      const beat = (n: number) => {
        onBeat();
        return heartbeat(n);
      };
      return events$.pipe(keepalive<EngineEvent, StreamEvent>({ intervalMs, isOutput, isPause, beat }), encode);
    }
    case 'comments':
      return events$.pipe(encode, keepaliveComments(intervalMs, onBeat));
    case 'off':
      return events$.pipe(encode);
  }
}

/** A continuation's new prefill (see ResumingEvent). */
function isPause(event: EngineEvent): boolean {
  return event.type === 'resuming';
}

/** `: keep-alive` comments among frames, for as long as they flow (a frame never counts as output). */
export function keepaliveComments(
  intervalMs: number,
  onBeat: () => void = () => {},
): OperatorFunction<SseFrame, SseFrame> {
  const beat = () => {
    onBeat();
    return KEEPALIVE_COMMENT;
  };
  return keepalive<SseFrame, SseFrame>({ intervalMs, isOutput: () => false, beat });
}
