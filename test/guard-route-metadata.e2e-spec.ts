import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  Module,
  SetMetadata,
} from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenerationRouteMetadata } from '../src/index.js';
import { startGateway, type RunningGateway } from './support/gateway.js';
import { hasProtocolErrorShape } from './support/protocol-errors.js';

/** The usual Nest pattern: a decorator that marks a route public, and one that names who may use the others. */
const IS_PUBLIC = 'test:is-public';
const Public = () => SetMetadata(IS_PUBLIC, true);
const AUDIENCE = 'test:audience';
const Audience = (audience: string) => SetMetadata(AUDIENCE, audience);

/** The plugin's metadata of the generation routes: all are for members, chat is public. */
@GenerationRouteMetadata()
@Audience('members')
class RouteMetadata {
  @Public()
  chat(): void {}
}

/** What the guard saw of each request: the route's handler and class, by name. */
const seen: string[] = [];

/** Lets a public route through, refuses the others naming their audience: read with Nest's `Reflector`. */
@Injectable()
class MembersGuard implements CanActivate {
  constructor(@Inject(Reflector) private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    seen.push(`${context.getClass().name}.${context.getHandler().name}`);
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    throw new ForbiddenException(`Only for ${this.reflector.getAllAndOverride<string>(AUDIENCE, targets)}.`);
  }
}

@Module({ providers: [RouteMetadata, { provide: APP_GUARD, useClass: MembersGuard }] })
class MembersPlugin {}

describe('a plugin guard reads the generation routes’ metadata with Nest’s Reflector (@GenerationRouteMetadata)', () => {
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway({ models: [{ name: 'stub', engine: 'stub' }] }, { plugins: [MembersPlugin] });
  });
  afterAll(() => gateway?.close());

  const post = (path: string, body: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('lets the route its handler’s metadata marks public through', async () => {
    const response = await post('/v1/chat/completions', { model: 'stub', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(200);
    expect(seen.at(-1)).toBe('GenerationRoutes.chat');
  });

  it('refuses another with the class’s metadata, in that protocol’s error shape', async () => {
    const response = await post('/v1/messages', {
      model: 'stub',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(response.status).toBe(403);
    expect(hasProtocolErrorShape('/v1/messages', body)).toBe(true);
    expect(body.error).toEqual({ type: 'permission_error', message: 'Only for members.' });
    expect(seen.at(-1)).toBe('GenerationRoutes.messages');
  });

  it('refuses the start when a method names no generation route', async () => {
    @GenerationRouteMetadata()
    class Misnamed {
      @Public()
      chatCompletions(): void {}
    }
    @Module({ providers: [Misnamed] })
    class MisnamedPlugin {}
    await expect(
      startGateway({ models: [{ name: 'stub', engine: 'stub' }] }, { plugins: [MisnamedPlugin] }),
    ).rejects.toThrow(
      /Misnamed \(@GenerationRouteMetadata\) has a method chatCompletions, named after no generation route/,
    );
  });
});
