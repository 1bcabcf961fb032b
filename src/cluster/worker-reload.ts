import type { Logger } from 'pino';
import type { WorkerLink } from './worker-link.js';
import type { WorkerReload } from './worker-protocol.js';

/**
 * Has one worker apply a configuration; resolves its changes, its refusal of the configuration,
 * or undefined (logged) if it failed otherwise or did not answer within `timeoutMs`
 * (`server.reloadTimeoutMs`: a stuck worker does not hold the reload: it applies it when it
 * answers, and is told so).
 */
export async function reloadWorker(
  link: WorkerLink,
  config: unknown,
  version: number,
  timeoutMs: number,
  logger: Logger,
): Promise<WorkerReload | undefined> {
  const asked = Date.now();
  const applied = link.channel.call<WorkerReload>('reload', { config }).then((outcome) => {
    if ('changes' in outcome) link.version = version;
    return outcome;
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  try {
    const outcome = await Promise.race([applied, late]);
    if (outcome !== 'late') return outcome;
    logger.error(
      `Worker ${link.pid} did not answer the reload within ${timeoutMs} ms (server.reloadTimeoutMs); it runs the configuration it had until it does.`,
    );
    applied.then(
      (answer) =>
        'changes' in answer &&
        logger.warn(`Worker ${link.pid} applied the configuration ${Date.now() - asked} ms after the reload.`),
      () => undefined,
    );
    return undefined;
  } catch (error) {
    logger.error(`Worker ${link.pid} could not apply the configuration: ${(error as Error).message}`);
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
