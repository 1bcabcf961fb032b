import type { EngineEvent } from '../engine/engine-event.js';
import type { Heartbeat } from './heartbeat.js';

/** What an encoder reads: the engine's events with keep-alive beats interleaved. */
export type StreamEvent = EngineEvent | Heartbeat;
