import { Injectable, Module, Scope } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { GenerationInterceptor } from './generation-interceptor.js';
import { GenerationInterceptors } from './generation-interceptors.js';

class BuiltIn extends GenerationInterceptor {}

@Injectable()
class Provided extends GenerationInterceptor {}

@Injectable()
class AsAppInterceptor extends GenerationInterceptor {}

@Injectable()
class NotAHook {}

@Injectable({ scope: Scope.REQUEST })
class RequestScoped extends GenerationInterceptor {}

@Injectable({ scope: Scope.TRANSIENT })
class Transient extends GenerationInterceptor {}

@Module({ providers: [Provided, NotAHook, { provide: APP_INTERCEPTOR, useClass: AsAppInterceptor }] })
class PluginModule {}

async function interceptorsWith(providers: Array<new () => unknown>, builtIn: GenerationInterceptor[] = []): Promise<GenerationInterceptors> {
  const moduleRef = await Test.createTestingModule({ imports: [DiscoveryModule, PluginModule], providers }).compile();
  return new GenerationInterceptors(moduleRef.get(DiscoveryService), builtIn);
}

describe('GenerationInterceptors', () => {
  it('lists the built-in interceptors first, then every other GenerationInterceptor provider, whatever its token, each once', async () => {
    const builtIn = new BuiltIn();
    const list = (await interceptorsWith([], [builtIn])).list();
    expect(list[0]).toBe(builtIn);
    expect(list.slice(1).map((interceptor) => interceptor.constructor.name).sort()).toEqual(['AsAppInterceptor', 'Provided']);
  });

  it('refuses a request-scoped or transient GenerationInterceptor: the routes resolve theirs once', async () => {
    await expect((async () => (await interceptorsWith([RequestScoped])).list())()).rejects.toThrow(/RequestScoped is request-scoped or transient/);
    await expect((async () => (await interceptorsWith([Transient])).list())()).rejects.toThrow(/Transient is request-scoped or transient/);
  });
});
