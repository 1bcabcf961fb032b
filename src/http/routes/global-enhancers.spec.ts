import { type CanActivate, Injectable, Module, Scope } from '@nestjs/common';
import {
  APP_GUARD,
  APP_INTERCEPTOR,
  APP_PIPE,
  ApplicationConfig,
  DiscoveryModule,
  DiscoveryService,
} from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { GenerationHook } from '../../observability/generation-hook.js';
import { globalEnhancers } from './global-enhancers.js';

@Injectable()
class SingletonGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedGuard extends SingletonGuard {}

@Injectable({ scope: Scope.TRANSIENT })
class TransientGuard extends SingletonGuard {}

@Injectable()
class SomePipe {
  transform(value: unknown): unknown {
    return value;
  }
}

@Injectable()
class HookAsInterceptor extends GenerationHook {}

/** What globalEnhancers reads of an application whose plugin provides `guard` and a pipe (and `interceptor`). */
async function applicationWith(
  guard: new () => CanActivate,
  interceptor?: new () => object,
): Promise<[DiscoveryService, ApplicationConfig]> {
  @Module({
    providers: [
      { provide: APP_GUARD, useClass: guard },
      { provide: APP_PIPE, useClass: SomePipe },
      ...(interceptor ? [{ provide: APP_INTERCEPTOR, useClass: interceptor }] : []),
    ],
  })
  class PluginModule {}
  const moduleRef = await Test.createTestingModule({ imports: [DiscoveryModule, PluginModule] }).compile();
  return [moduleRef.get(DiscoveryService), moduleRef.get(ApplicationConfig)];
}

describe('globalEnhancers', () => {
  it('takes a singleton APP_GUARD for the generation routes and names an APP_PIPE they cannot run', async () => {
    const found = globalEnhancers(...(await applicationWith(SingletonGuard)), []);
    expect(found.guards.map((guard) => guard.constructor.name)).toEqual(['SingletonGuard']);
    expect(found.unreachable).toEqual(['APP_PIPE SomePipe']);
  });

  it('refuses a request-scoped or transient APP_GUARD, naming it, rather than run one never constructed', async () => {
    expect(globalEnhancers.bind(undefined, ...(await applicationWith(RequestScopedGuard)), [])).toThrow(
      /APP_GUARD RequestScopedGuard is request-scoped or transient/,
    );
    expect(globalEnhancers.bind(undefined, ...(await applicationWith(TransientGuard)), [])).toThrow(
      /APP_GUARD TransientGuard is request-scoped or transient/,
    );
  });

  it('never sees a GenerationHook registered as an APP_INTERCEPTOR: it is no interceptor, and Nest refuses the start', async () => {
    await expect(applicationWith(SingletonGuard, HookAsInterceptor)).rejects.toThrow(
      /HookAsInterceptor\) doesn't provide the "intercept" method/,
    );
  });
});
