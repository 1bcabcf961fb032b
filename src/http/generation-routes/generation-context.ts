import type { ContextType, ExecutionContext, Type } from '@nestjs/common';
import type { HttpArgumentsHost, RpcArgumentsHost, WsArgumentsHost } from '@nestjs/common/interfaces/features/arguments-host.interface.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The ExecutionContext guards, interceptors and filters get on a generation route: the same
 * answers as Nest's own (`getClass`, `getHandler` for metadata, `switchToHttp()` for the request
 * and the reply), as one object with its methods on the prototype, since it lives as long as the
 * stream (Nest's context makes three closures each time `switchToHttp()` is called).
 */
export class GenerationContext implements ExecutionContext, HttpArgumentsHost {
  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly controller: Type<unknown>,
    private readonly handler: (...args: never[]) => unknown,
  ) {}

  getClass<T = unknown>(): Type<T> {
    return this.controller as Type<T>;
  }

  getHandler(): (...args: never[]) => unknown {
    return this.handler;
  }

  getArgs<T extends unknown[] = unknown[]>(): T {
    return [this.request, this.reply, undefined] as T;
  }

  getArgByIndex<T = unknown>(index: number): T {
    return this.getArgs()[index] as T;
  }

  getType<T extends string = ContextType>(): T {
    return 'http' as T;
  }

  switchToHttp(): HttpArgumentsHost {
    return this;
  }

  switchToRpc(): RpcArgumentsHost {
    throw new Error('A generation route is an HTTP context.');
  }

  switchToWs(): WsArgumentsHost {
    throw new Error('A generation route is an HTTP context.');
  }

  getRequest<T = FastifyRequest>(): T {
    return this.request as T;
  }

  getResponse<T = FastifyReply>(): T {
    return this.reply as T;
  }

  getNext<T = undefined>(): T {
    return undefined as T;
  }
}
