import { pino, type DestinationStream } from 'pino';
import { LoggerModule } from 'nestjs-pino';
import type { LoggingConfig } from '../../config/observability-config.js';
import { requestIdOf } from './request-id.js';

/**
 * pino through nestjs-pino: JSON lines, the request id bound to every line logged while serving
 * a request, credentials redacted. pino-http's automatic per-response line is off: the
 * RequestLogHook writes one richer line per generation instead. nestjs-pino keeps one
 * root logger per process (made by the first gateway), which is fine: a process runs one gateway.
 */
export function gantryLoggerModule(config: LoggingConfig, destination?: DestinationStream) {
  const options = {
    level: config.level,
    autoLogging: false,
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'requestId' },
    genReqId: requestIdOf,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]'],
      censor: '[redacted]',
    },
  };
  return LoggerModule.forRoot({ pinoHttp: [options, destination ?? bufferedStdout()] });
}

let stdout: ReturnType<typeof pino.destination> | undefined;

/**
 * Writes out what the buffered stdout holds, before a planned exit (a shutdown): the exit handler
 * alone cannot wait for a write already under way when stdout is slow. At most `timeoutMs`.
 */
export function flushLogs(timeoutMs = 2000): Promise<void> {
  const boom = stdout;
  if (!boom) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    boom.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Standard output, written in batches, not a system call per request line (docs/benchmarks.md).
 * Lines wait at most a second (or until 8 KB are buffered), and what is buffered is written out
 * when the process exits, a shutdown included. One per process, like the logger.
 */
function bufferedStdout(): DestinationStream {
  if (stdout) return stdout;
  const boom = pino.destination({ dest: 1, sync: false, minLength: 8_192 });
  setInterval(() => boom.flush(), 1000).unref();
  process.once('exit', () => {
    try {
      boom.flushSync();
    } catch {
      // Nothing left to report it to.
    }
  });
  stdout = boom;
  return boom;
}
