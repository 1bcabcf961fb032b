import 'reflect-metadata';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { getMetadataStorage } from 'class-validator';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../src/config/config-loader.js';
import { GatewayConfig } from '../src/config/gateway-config.js';
import { ModelConfigBase } from '../src/config/model-config.js';
import type { ModelKind } from '../src/config/model-entries.js';
import { NamedApiKeyConfig } from '../src/config/tenant-config.js';
import { engineKindOf } from '../src/engines/engine-kind.js';

type ConfigClass = new () => object;

/** One key the gateway accepts: its dotted path, its default, and whether it holds keys of its own. */
interface ConfigKey {
  path: string;
  defaultValue: unknown;
  nested: boolean;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** `threads` defaults to min(4, cores): what the class holds depends on the machine running this. */
const MACHINE_DEPENDENT = new Set(['models[].threads']);

/**
 * Every key of `configClass` under `prefix`, found through class-validator's metadata (a key it
 * has no rule for is refused by the loader's whitelist, so the rules are the keys), nested
 * classes followed through their declared type.
 */
function keysOf(configClass: ConfigClass, prefix: string, visited: Set<Function>): ConfigKey[] {
  visited.add(configClass);
  const metadata = getMetadataStorage().getTargetValidationMetadatas(configClass, '', true, false);
  const defaults = new configClass() as Record<string, unknown>;
  const properties = [...new Set(metadata.map((rule) => rule.propertyName))];
  return properties.flatMap((property) => {
    const path = `${prefix}${property}`;
    const nested = metadata.some((rule) => rule.propertyName === property && rule.type === 'nestedValidation');
    const own: ConfigKey = { path, defaultValue: defaults[property], nested };
    if (!nested) return [own];
    const type = Reflect.getMetadata('design:type', configClass.prototype, property) as ConfigClass;
    return [own, ...keysOf(type, `${path}.`, visited)];
  });
}

/** What the TypeScript files in `folder` (recursively; specs aside) that pass `wanted` export. */
async function exportsIn(folder: string, wanted: (file: string) => boolean): Promise<unknown[]> {
  const files = readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' }).filter(
    (file) => wanted(file) && !file.endsWith('.spec.ts'),
  );
  const modules = await Promise.all(
    files.map((file) => import(pathToFileURL(join(root, folder, file)).href) as Promise<Record<string, unknown>>),
  );
  return modules.flatMap((module) => Object.values(module));
}

/** The exported classes with class-validator rules among `exported`. */
function configClassesAmong(exported: unknown[]): ConfigClass[] {
  return exported.filter(
    (value): value is ConfigClass =>
      typeof value === 'function' &&
      getMetadataStorage().getTargetValidationMetadatas(value, '', true, false).length > 0,
  );
}

/** The built-in engine kinds: the `@EngineKind` providers of src/engines' `*-engine-kind.ts` files. */
async function builtInKinds(): Promise<ModelKind[]> {
  const exported = await exportsIn('src/engines', (file) => file.endsWith('-engine-kind.ts'));
  return exported.flatMap((value) => (typeof value === 'function' ? (engineKindOf(value) ?? []) : []));
}

/** Every key: the file's, each named key's, and each model entry's of every engine kind. */
async function allKeys(visited: Set<Function>): Promise<ConfigKey[]> {
  const kinds = await builtInKinds();
  const keys = [
    ...keysOf(GatewayConfig, '', visited),
    ...keysOf(NamedApiKeyConfig, 'auth.apiKeys[].', visited),
    ...keysOf(ModelConfigBase, 'models[].', visited),
    ...kinds.flatMap((kind) => keysOf(kind.config, 'models[].', visited)),
  ];
  return [...new Map(keys.map((key) => [key.path, key])).values()];
}

/** The YAML block that follows `heading` in a markdown text. */
function yamlAfter(markdown: string, heading: string): string {
  const from = markdown.indexOf(heading);
  const block = /```yaml\n([\s\S]*?)```/.exec(markdown.slice(from));
  if (from < 0 || block === null) throw new Error(`no YAML block after ${heading}`);
  return block[1];
}

/** The rows of the page's `| key | default | what |` tables: each key's path and its default cell. */
function documentedKeys(markdown: string): Map<string, string> {
  const rows = new Map<string, string>();
  let inKeyTable = false;
  for (const line of markdown.split('\n')) {
    if (/^\|\s*key\s*\|\s*default\s*\|\s*what\s*\|/.test(line)) inKeyTable = true;
    else if (!line.startsWith('|')) inKeyTable = false;
    const row = inKeyTable ? /^\|\s*`([^`]+)`\s*\|([^|]*)\|/.exec(line) : null;
    if (row) rows.set(row[1], row[2].trim());
  }
  return rows;
}

/** How the default cell must begin for a default the class holds: the value, in backticks. */
function defaultCell(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return `\`${String(value)}\``;
  if (Array.isArray(value) && value.length === 0) return '`[]`';
  return undefined;
}

describe('docs/configuration.md', () => {
  afterEach(() => vi.unstubAllEnvs());
  const page = documentedKeys(readFileSync(join(root, 'docs/configuration.md'), 'utf8'));

  it('documents every key of every config class, with the default the class holds', async () => {
    const keys = await allKeys(new Set());
    expect(keys.length).toBeGreaterThan(90);
    expect(keys.filter((key) => !key.nested && !page.has(key.path)).map((key) => key.path)).toEqual([]);
    const wrongDefaults = keys.flatMap((key) => {
      const expected = defaultCell(key.defaultValue);
      const cell = page.get(key.path);
      if (expected === undefined || cell === undefined || MACHINE_DEPENDENT.has(key.path) || cell.startsWith(expected))
        return [];
      return [`${key.path}: the page says ${cell}, the class holds ${expected}`];
    });
    expect(wrongDefaults).toEqual([]);
  });

  it('names no key the gateway does not accept', async () => {
    const paths = new Set((await allKeys(new Set())).map((key) => key.path));
    expect([...page.keys()].filter((path) => !paths.has(path))).toEqual([]);
  });

  it("has examples a gateway starts from: the README's, and the complete file", async () => {
    vi.stubEnv('GANTRY_API_KEY', 'sk-example-1');
    vi.stubEnv('SEARCH_KEY', 'sk-example-2');
    const kinds = await builtInKinds();
    expect(kinds.map((kind) => kind.name).sort()).toEqual(['http', 'llama', 'stub']);
    const examples = [
      yamlAfter(readFileSync(join(root, 'README.md'), 'utf8'), '## Configure it'),
      yamlAfter(readFileSync(join(root, 'docs/configuration.md'), 'utf8'), '## A complete file'),
    ];
    for (const example of examples) {
      const config = parseConfig(parseYaml(example), 'example', kinds);
      expect(config.models.length).toBeGreaterThan(0);
    }
  });

  it('reaches every config class of src/config and src/engines from the configuration', async () => {
    const visited = new Set<Function>();
    await allKeys(visited);
    const classes = [
      ...configClassesAmong(await exportsIn('src/config', (file) => file.endsWith('.ts'))),
      ...configClassesAmong(await exportsIn('src/engines', (file) => file.endsWith('-config.ts'))),
    ];
    expect(classes.length).toBeGreaterThan(10);
    expect(classes.filter((configClass) => !visited.has(configClass)).map((configClass) => configClass.name)).toEqual(
      [],
    );
  });
});
