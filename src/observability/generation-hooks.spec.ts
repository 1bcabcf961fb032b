import { Injectable, Module, Scope } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { GenerationHook } from './generation-hook.js';
import { GenerationHooks } from './generation-hooks.js';

class BuiltIn extends GenerationHook {}

@Injectable()
class Provided extends GenerationHook {}

@Injectable()
class AlsoProvided extends GenerationHook {}

@Injectable()
class NotAHook {}

@Injectable({ scope: Scope.REQUEST })
class RequestScoped extends GenerationHook {}

@Injectable({ scope: Scope.TRANSIENT })
class Transient extends GenerationHook {}

@Module({ providers: [Provided, NotAHook, { provide: 'also', useClass: AlsoProvided }] })
class PluginModule {}

async function hooksWith(
  providers: Array<new () => unknown>,
  builtIn: GenerationHook[] = [],
): Promise<GenerationHooks> {
  const moduleRef = await Test.createTestingModule({ imports: [DiscoveryModule, PluginModule], providers }).compile();
  return new GenerationHooks(moduleRef.get(DiscoveryService), builtIn);
}

describe('GenerationHooks', () => {
  it('lists the built-in hooks first, then every other GenerationHook provider, whatever its token, each once', async () => {
    const builtIn = new BuiltIn();
    const list = (await hooksWith([], [builtIn])).list();
    expect(list[0]).toBe(builtIn);
    expect(
      list
        .slice(1)
        .map((hook) => hook.constructor.name)
        .sort(),
    ).toEqual(['AlsoProvided', 'Provided']);
  });

  it('refuses a request-scoped or transient GenerationHook: the routes resolve theirs once', async () => {
    await expect((async () => (await hooksWith([RequestScoped])).list())()).rejects.toThrow(
      /RequestScoped is request-scoped or transient/,
    );
    await expect((async () => (await hooksWith([Transient])).list())()).rejects.toThrow(
      /Transient is request-scoped or transient/,
    );
  });
});
