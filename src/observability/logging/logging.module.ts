import type { DestinationStream } from 'pino';
import { LoggerModule } from 'nestjs-pino';
import type { LoggingConfig } from '../../config/observability-config.js';
import { requestIdOf } from './request-id.js';

/**
 * pino through nestjs-pino: JSON lines, the request id bound to every line logged while serving
 * a request, credentials redacted. pino-http's automatic per-response line is off: the
 * RequestLogInterceptor writes one richer line per generation instead. nestjs-pino keeps one
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
  return LoggerModule.forRoot({ pinoHttp: destination ? [options, destination] : options });
}
