import { cpSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from './support/gateway.js';

const ROOT = join(import.meta.dirname, '..');

/**
 * A folder holding a second copy of Gantry's build (`gantry-copy/`, as a plugin that resolves a
 * `gantry` of its own in another `node_modules` gets) and a plugin, written by `source`, that
 * imports its decorator and base classes from that copy. Nest resolves from the repository's
 * `node_modules`, as the gateway's does.
 */
function pluginWithItsOwnGantry(source: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'gantry-copy-plugin-'));
  symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'), 'dir');
  cpSync(join(ROOT, 'dist', 'src'), join(folder, 'gantry-copy'), { recursive: true });
  writeFileSync(join(folder, 'plugin.mjs'), source);
  return join(folder, 'plugin.mjs');
}

/** An engine kind (`copied`) and a hook, both from the plugin's own copy of Gantry. */
const COPY_PLUGIN = pluginWithItsOwnGantry(`import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { Observable } from 'rxjs';
import { EngineKind } from './gantry-copy/engines/engine-kind.js';
import { InferenceEngine } from './gantry-copy/engine/inference-engine.js';
import { ZERO_USAGE } from './gantry-copy/engine/engine-event.js';
import { GenerationHook } from './gantry-copy/observability/generation-hook.js';

class CopiedEngine extends InferenceEngine {
  generate() {
    return new Observable((subscriber) => {
      subscriber.next({ type: 'text', text: 'from the copy' });
      subscriber.next({ type: 'done', finishReason: 'stop', usage: ZERO_USAGE });
      subscriber.complete();
    });
  }
}
export class CopiedKind {
  create() { return new CopiedEngine(); }
}
EngineKind('copied')(CopiedKind);

export class CopiedHook extends GenerationHook {
  onEnd(telemetry, outcome) {
    appendFileSync(join(import.meta.dirname, 'ends.log'), telemetry.model + ' ' + outcome.kind + '\\n');
  }
}
Injectable()(CopiedHook);

export default class CopyPlugin {}
Module({ providers: [CopiedKind, CopiedHook] })(CopyPlugin);
`);

/** A hook extending a GenerationHook class Gantry cannot recognise (a copy older than the mark). */
const UNMARKED_PLUGIN = pluginWithItsOwnGantry(`import { Injectable, Module } from '@nestjs/common';
class GenerationHook { intercept(_context, next) { return next.handle(); } }
export class OldHook extends GenerationHook { onEnd() {} }
Injectable()(OldHook);
export default class OldHookPlugin {}
Module({ providers: [OldHook] })(OldHookPlugin);
`);

/** An engine kind marked by an older Gantry: Nest's DiscoveryService decorator, a random key of its own. */
const UNMARKED_KIND_PLUGIN = pluginWithItsOwnGantry(`import { Injectable, Module } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { ModelConfigBase } from './gantry-copy/config/model-config.js';
const OldEngineKind = DiscoveryService.createDecorator();
export class OldKind { create() { throw new Error('never made'); } }
Injectable()(OldKind);
OldEngineKind({ name: 'old', config: ModelConfigBase, singleProcess: false })(OldKind);
export default class OldKindPlugin {}
Module({ providers: [OldKind] })(OldKindPlugin);
`);

describe('a plugin that resolves its own copy of gantry', () => {
  let gateway: RunningGateway | undefined;
  afterAll(() => gateway?.close());

  it('has its engine kind and its hook recognised by their registered marks, not ignored', async () => {
    gateway = await startGateway({ plugins: [COPY_PLUGIN], models: [{ name: 'copy', engine: 'copied' }] });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'copy',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0].message.content).toBe('from the copy');
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(COPY_PLUGIN, '..', 'ends.log'), 'utf8')).toBe('copy completed\n');
  });

  it('refuses the start, naming the plugin, when a hook or a kind comes from a copy that leaves no mark', async () => {
    await expect(startGateway({ plugins: [UNMARKED_PLUGIN] })).rejects.toThrow(
      /The plugin module OldHookPlugin provides OldHook, a GenerationHook of another copy of Gantry/,
    );
    await expect(
      startGateway({ plugins: [UNMARKED_KIND_PLUGIN], models: [{ name: 'm', engine: 'stub' }] }),
    ).rejects.toThrow(
      /The plugin module OldKindPlugin provides OldKind, marked as the engine kind 'old' by another copy/,
    );
  });
});
