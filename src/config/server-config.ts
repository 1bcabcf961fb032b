import { availableParallelism } from 'node:os';
import { IsIn, IsInt, IsString, Max, Min, ValidateBy } from 'class-validator';

export const READINESS_REQUIREMENTS = ['any', 'all'] as const;

export class ServerConfig {
  /** `/ready` answers 200 while `any` model can serve (the default) or only while `all` can. */
  @IsIn(READINESS_REQUIREMENTS)
  readinessRequires: (typeof READINESS_REQUIREMENTS)[number] = 'any';

  @IsString()
  host: string = '127.0.0.1';

  @IsInt()
  @Min(0)
  @Max(65535)
  port: number = 8000;

  /** Largest request body accepted; larger ones get 413. */
  @IsInt()
  @Min(1024)
  bodyLimitBytes: number = 8 * 1024 * 1024;

  /** Frames a stream may hold for a client that does not read; past it the client is dropped. */
  @IsInt()
  @Min(4096)
  maxBufferedBytesPerStream: number = 4 * 1024 * 1024;

  /** How long an idle keep-alive connection stays open; above common load balancers' 60 s. */
  @IsInt()
  @Min(0)
  keepAliveTimeoutMs: number = 65_000;

  /** Time allowed to receive a request's headers. */
  @IsInt()
  @Min(1)
  headersTimeoutMs: number = 60_000;

  /**
   * Time allowed to receive a whole request, headers and body, from its first byte (Node's
   * `requestTimeout`; answers never count); 0 (the default) leaves it to the two limits above.
   */
  @IsInt()
  @Min(0)
  requestTimeoutMs: number = 0;

  /** Time allowed for a request body to arrive whole once its headers did; past it, 408. 0: no limit. */
  @IsInt()
  @Min(0)
  bodyTimeoutMs: number = 30_000;

  /** Open connections one client address may hold; more are refused with 429. 0 (the default): no limit. */
  @IsInt()
  @Min(0)
  maxConnectionsPerAddress: number = 0;

  /**
   * Processes serving the port: 1 (the default) is one process; N > 1 (or `auto`, one per
   * available core) runs a primary and N workers (node:cluster), with the configured limits held
   * for the instance as a whole by the primary.
   */
  @IsWorkerCount()
  workers: number | 'auto' = 1;

  /**
   * With workers, how long a reload waits for each worker to apply it. A worker that has not
   * answered by then (stuck, or stopped) is named in an error and left to apply it when it can;
   * the reload goes on with the others.
   */
  @IsInt()
  @Min(1)
  reloadTimeoutMs: number = 30_000;

  /**
   * How long the guards of a generation request (Gantry's, then plugins' `APP_GUARD`s) may take to
   * decide; past it the request is refused with 503 `guard_timeout` in its protocol's shape, and
   * whatever it held (a `concurrentStreams` slot) is given back.
   */
  @IsInt()
  @Min(1)
  guardTimeoutMs: number = 10_000;
}

/** The most workers one instance runs; beyond, something is wrong with the number. */
export const MAX_WORKERS = 256;

/** How many processes `server.workers` asks for on a machine with `cores` available cores. */
export function workerCount(server: Pick<ServerConfig, 'workers'>, cores: number = availableParallelism()): number {
  return server.workers === 'auto' ? Math.max(1, Math.min(cores, MAX_WORKERS)) : server.workers;
}

/** The keyword `auto` or an integer from 1 to MAX_WORKERS (`server.workers`). */
function IsWorkerCount(): PropertyDecorator {
  return ValidateBy({
    name: 'isWorkerCount',
    validator: {
      validate: (value) =>
        value === 'auto' || (Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_WORKERS),
      defaultMessage: (args) => `${args?.property} must be "auto" or an integer from 1 to ${MAX_WORKERS}`,
    },
  });
}

/** Limits on what a request may ask for, checked before its stream opens. */
export class LimitsConfig {
  /**
   * Messages a conversation may hold (system and tool messages included). The default bounds what
   * one request's checks cost the event loop every other stream shares (docs/benchmarks.md).
   */
  @IsInt()
  @Min(1)
  maxMessages: number = 2000;

  /**
   * Nesting depth of a JSON body (objects and arrays); deeper bodies get 400 before validation.
   * At most 256: validation recurses, and about 1,000 levels exhaust its stack (a 500).
   */
  @IsInt()
  @Min(8)
  @Max(256)
  maxJsonDepth: number = 64;

  /**
   * Objects and arrays a JSON body may hold in all; more get 400 before validation. What one
   * request's checks hold the event loop for grows with their count (about 50 ms at the default
   * on the costliest shape, docs/benchmarks.md "Loop pauses"); an agent's turn holds a few hundred.
   */
  @IsInt()
  @Min(100)
  maxJsonNodes: number = 25_000;
}

export class ShutdownConfig {
  /** On SIGTERM, how long open streams may run on before they end with the protocol's error. */
  @IsInt()
  @Min(0)
  drainMs: number = 10_000;
}
