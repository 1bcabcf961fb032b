import { IpcChannel } from './ipc-channel.js';

/**
 * A worker's channel to its primary, over the process's IPC link. `onGone` runs once if the link
 * closes (the primary died, or is exiting): pending calls fail, and the worker should drain.
 */
export function connectToPrimary(onGone: () => void): IpcChannel {
  const channel = new IpcChannel((message) => {
    if (!process.connected || process.send === undefined) throw new Error('the primary is gone');
    process.send(message);
  });
  process.on('message', (message) => channel.receive(message));
  process.once('disconnect', () => {
    channel.close();
    onGone();
  });
  return channel;
}
