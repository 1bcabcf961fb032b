import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createGateway, type GatewayOptions } from '../../src/bootstrap.js';
import { parseConfig } from '../../src/config/config-loader.js';
import { ModelRegistry } from '../../src/models/model-registry.js';

export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  registry: ModelRegistry;
  close(): Promise<void>;
}

/**
 * Starts a real gateway on a free loopback port from a plain configuration object, its models
 * validated by their engine kinds (plugins' included) as the CLI does. Logging is silent unless the
 * configuration sets `observability.logging`.
 */
export async function startGateway(
  raw: Record<string, unknown>,
  options: GatewayOptions = {},
): Promise<RunningGateway> {
  const observability = (raw.observability ?? {}) as Record<string, unknown>;
  const config = parseConfig({ ...raw, observability: { logging: { level: 'silent' }, ...observability } }, 'test');
  config.server.host = '127.0.0.1';
  const app = await createGateway(config, { origin: 'test', ...options });
  // The models start with the application: a refused one rejects here, and leaves nothing open.
  await app.listen(0, '127.0.0.1').catch(async (error: unknown) => {
    await app.close().catch(() => undefined);
    throw error;
  });
  const address = app.getHttpServer().address();
  if (typeof address !== 'object' || address === null) throw new Error('gateway did not bind a TCP port');
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    registry: app.get(ModelRegistry),
    close: () => app.close(),
  };
}

/** Polls `condition` (synchronous or not) until it holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** A response body as loosely typed JSON, for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function readJson(response: Response): Promise<any> {
  return response.json();
}
