import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.js';
import { readReloadedConfig } from './reloaded-config.js';

const MODELS = 'models:\n  - { name: production, engine: stub }\n';

function configFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gantry-reload-')), 'gantry.yaml');
  writeFileSync(file, text);
  return file;
}

describe('readReloadedConfig', () => {
  it('reads a whole file at once, as a start reads it', async () => {
    const retries: string[] = [];
    const config = await readReloadedConfig({ file: configFile(MODELS) }, (reason) => retries.push(reason), [1]);
    expect(config.models.map((model) => model.name)).toEqual(['production']);
    expect(retries).toEqual([]);
  });

  it('reads an unfinished file again after each delay, saying why, and refuses it when it stays so', async () => {
    for (const [text, reason] of [
      ['', 'the file is empty'],
      ['# nothing yet\n', 'the file is empty'],
      ['keepalive: { intervalMs: 500 }\n', 'models is missing'],
      ['models:\n  - { name: a, engine: st', 'not valid YAML'],
    ]) {
      const retries: Array<[string, number]> = [];
      const refusal = await readReloadedConfig(
        { file: configFile(text) },
        (why, delayMs) => retries.push([why, delayMs]),
        [1, 2],
      ).catch((error: unknown) => error);
      expect(refusal, text).toBeInstanceOf(ConfigError);
      expect((refusal as ConfigError).message, text).toContain(reason);
      expect(
        retries.map(([why, delayMs]) => [why.startsWith(reason), delayMs]),
        text,
      ).toEqual([
        [true, 1],
        [true, 2],
      ]);
    }
  });

  it('applies the file once it is whole', async () => {
    const file = configFile('');
    const config = await readReloadedConfig({ file }, () => writeFileSync(file, MODELS), [1, 1]);
    expect(config.models.map((model) => model.name)).toEqual(['production']);
  });

  it('refuses an invalid file at once: it is not unfinished, it is wrong', async () => {
    const retries: string[] = [];
    // The keys every entry has are checked here; each entry's own keys by its engine kind, when applied.
    const file = configFile(`${MODELS}  - { engine: stub }\n`);
    await expect(readReloadedConfig({ file }, (reason) => retries.push(reason), [1])).rejects.toThrow('models[1].name');
    expect(retries).toEqual([]);
  });
});
