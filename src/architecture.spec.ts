import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IModule } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { beforeAll, describe, expect, it } from 'vitest';

const REPOSITORY = fileURLToPath(new URL('..', import.meta.url));

/** The rooms of the gateway are the folders right under src/; its root files are one more. */
function roomOf(path: string): string | undefined {
  const match = /^src\/(?:([^/]+)\/)?[^/]+$/.exec(path) ?? /^src\/([^/]+)\//.exec(path);
  if (!match) return undefined;
  return match[1] === undefined ? 'src' : `src/${match[1]}`;
}

/** Each arrow between two rooms, with the imports that draw it. */
function roomArrows(modules: readonly IModule[]): Map<string, Map<string, string[]>> {
  const arrows = new Map<string, Map<string, string[]>>();
  for (const module of modules) {
    const from = roomOf(module.source);
    if (from === undefined || /[.]spec[.]ts$/.test(module.source)) continue;
    for (const dependency of module.dependencies) {
      const to = roomOf(dependency.resolved);
      if (to === undefined || to === from) continue;
      const targets = arrows.get(from) ?? new Map<string, string[]>();
      arrows.set(from, targets);
      targets.set(to, [...(targets.get(to) ?? []), `${module.source} → ${dependency.resolved}`]);
    }
  }
  return arrows;
}

/** The rooms that reach each other both ways (strongly connected, Tarjan), as sorted groups. */
function roomCycles(arrows: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (room: string) => {
    index.set(room, index.size);
    low.set(room, index.get(room)!);
    stack.push(room);
    onStack.add(room);
    for (const next of arrows.get(room)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(room, Math.min(low.get(room)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(room, Math.min(low.get(room)!, index.get(next)!));
      }
    }
    if (low.get(room) !== index.get(room)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== room);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const room of arrows.keys()) if (!index.has(room)) visit(room);
  return groups;
}

describe('the import rules (.dependency-cruiser.cjs, docs/architecture.md)', () => {
  let result: ICruiseResult;

  beforeAll(async () => {
    const options = await extractDepcruiseOptions(`${REPOSITORY}.dependency-cruiser.cjs`);
    const { output } = await cruise(['src', 'apps', 'examples', 'test'], { ...options, baseDir: REPOSITORY });
    result = output as ICruiseResult;
  }, 60_000);

  it('reads the whole code base', () => {
    const sources = result.modules.map((module) => module.source);
    expect(sources).toContain('src/engine/inference-engine.ts');
    expect(sources).toContain('src/gateway.module.ts');
    expect(sources.filter((source) => source.startsWith('src/')).length).toBeGreaterThan(150);
  });

  it('has no import that breaks a rule', () => {
    const violations = result.summary.violations.map(
      (violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`,
    );
    expect(violations).toEqual([]);
  });

  it('has no cycle between rooms', () => {
    const arrows = roomArrows(result.modules);
    const cycles = roomCycles(arrows).map((group) =>
      group.flatMap((from) => group.flatMap((to) => arrows.get(from)?.get(to) ?? [])),
    );
    expect(cycles).toEqual([]);
  });
});
