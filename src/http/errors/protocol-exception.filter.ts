import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EmptyError } from 'rxjs';
import { GatewayError, type FailureKind } from '../../errors/gateway-error.js';
import { renderError } from '../../protocols/errors/render-error.js';
import { dialectOfPath } from '../../protocols/generation-protocols.js';
import { pathOf } from '../../routing/probe-paths.js';

const KIND_BY_STATUS: Record<number, FailureKind> = {
  400: 'invalid_request',
  401: 'authentication',
  403: 'permission',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Every error answered before a stream opens goes through here and leaves in the shape of the
 * protocol its path speaks. Once headers are out, errors travel in-band (the encoders' job), so
 * this filter stays silent for them. Nest's routes reach it as their exception filter
 * (`APP_FILTER`); the generation routes call `answer` directly.
 */
@Catch()
export class ProtocolExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Gantry');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.answer(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  answer(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return;
    const error = this.toGatewayError(exception, request, reply);
    const rendered = renderError(error, dialectOfPath(request.url));
    void reply
      .status(this.statusOf(exception) ?? rendered.status)
      .headers(rendered.headers)
      .send(rendered.body);
  }

  /** An HttpException's own status where no failure kind stands for it (a plugin guard's 451, say). */
  private statusOf(exception: unknown): number | undefined {
    if (!(exception instanceof HttpException)) return undefined;
    const status = exception.getStatus();
    return status >= 400 && status <= 599 && KIND_BY_STATUS[status] === undefined ? status : undefined;
  }

  private toGatewayError(exception: unknown, request: FastifyRequest, reply: FastifyReply): GatewayError {
    if (exception instanceof GatewayError) return exception;
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) return this.notFound(request, reply);
      const kind = KIND_BY_STATUS[status] ?? (status >= 500 ? 'internal' : 'invalid_request');
      return new GatewayError(kind, this.clientMessage(exception, status));
    }
    if (!(exception instanceof EmptyError)) {
      this.logger.error(`Unexpected failure on ${request.method} ${pathOf(request.url)}`, (exception as Error)?.stack);
    }
    return new GatewayError('internal', 'The gateway failed to serve this request.');
  }

  /** An unknown route is 404; a known path with another method is 405 with `Allow`. */
  private notFound(request: FastifyRequest, reply: FastifyReply): GatewayError {
    const path = pathOf(request.url);
    const allowed = METHODS.filter((method) => request.server.hasRoute({ url: path, method }));
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      return new GatewayError(
        'method_not_allowed',
        `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}.`,
      );
    }
    return new GatewayError('not_found', `No route for ${request.method} ${path}.`, { code: 'unknown_url' });
  }

  private clientMessage(exception: HttpException, status: number): string {
    if (status === 413) return 'The request body is larger than this gateway accepts.';
    if (status === 400 && /JSON/i.test(exception.message))
      return `The request body is not valid JSON: ${exception.message}`;
    if (status === 415) return 'The request body must be JSON (content-type: application/json).';
    return exception.message;
  }
}
