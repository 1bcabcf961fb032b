import type { Worker } from 'node:cluster';
import type { IpcChannel } from './ipc-channel.js';

/** One worker as the primary sees it. */
export interface WorkerLink {
  worker: Worker;
  channel: IpcChannel;
  pid: number;
  forkedAt: number;
  ready: boolean;
  /** The configuration version it runs. */
  version: number;
}
