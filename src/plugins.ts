import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DynamicModule, Type } from '@nestjs/common';

/**
 * Loads operator plugins (`plugins:`): ES modules whose default export is a Nest module (a class
 * or a dynamic module). A plugin's providers extend Gantry without editing it: engine kinds
 * (`@EngineKind`), guards (`APP_GUARD`) and generation hooks (`GenerationHook`), each found among
 * every module's providers when the gateway is built. Paths are relative to the working directory.
 */
export async function loadPlugins(paths: readonly string[]): Promise<Array<Type<unknown> | DynamicModule>> {
  const modules: Array<Type<unknown> | DynamicModule> = [];
  for (const path of paths) {
    const url = pathToFileURL(isAbsolute(path) ? path : resolve(process.cwd(), path)).href;
    let exported: { default?: unknown };
    try {
      exported = (await import(url)) as { default?: unknown };
    } catch (error) {
      throw new Error(`Cannot load plugin ${path}: ${(error as Error).message}`, { cause: error });
    }
    if (typeof exported.default !== 'function' && typeof exported.default !== 'object') {
      throw new Error(`Plugin ${path} has no default export (a Nest module)`);
    }
    modules.push(exported.default as Type<unknown> | DynamicModule);
  }
  return modules;
}
