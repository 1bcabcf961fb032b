/**
 * Gantry's import rules: the arrows allowed between the rooms of src/ (docs/architecture.md).
 * Checked on every `npm test` by src/architecture.spec.ts, which also refuses cycles between rooms;
 * `npx depcruise src apps examples test` runs the same rules from the command line.
 *
 * TypeScript 7 has no JavaScript API for dependency-cruiser to parse with, so it parses with swc,
 * which reads type-only imports too: a type is as much a dependency as a value here.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'protocols-not-engines',
      comment: 'Protocols map the neutral events to a wire format; they know no engine.',
      severity: 'error',
      from: { path: '^src/protocols/' },
      to: { path: '^src/engines/' },
    },
    {
      name: 'engines-not-protocols',
      comment: 'Engines emit the neutral events; they know no client protocol.',
      severity: 'error',
      from: { path: '^src/engines/' },
      to: { path: '^src/protocols/' },
    },
    {
      name: 'port-no-adapter-or-transport',
      comment: 'The engine port (src/engine) names no adapter, model runtime or transport.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: {
        path: [
          '^src/(engines|models|http)/',
          '^node_modules/(fastify|@fastify/[^/]+|undici|@nestjs/platform-[^/]+|@nestjs/core)/',
        ],
      },
    },
    {
      name: 'http-is-the-edge',
      comment: 'Only the root files (bootstrap, gateway.module) import http: no room below it does.',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: '^src/http/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'src-not-apps',
      comment: 'The gateway stands alone: its companion programs and examples import it, never the reverse.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(apps|examples)/' },
    },
    {
      name: 'plugins-use-the-public-entry',
      comment: 'The example plugins import Gantry as any plugin must: through its public entry (src/index.ts) alone.',
      severity: 'error',
      from: { path: '^examples/', pathNot: '[.]spec[.]ts$' },
      to: { path: '^src/', pathNot: '^src/index[.]ts$' },
    },
    {
      name: 'src-not-tests',
      comment: "Only specs use the tests' support code.",
      severity: 'error',
      from: { path: '^src/', pathNot: '[.]spec[.]ts$' },
      to: { path: '^test/' },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import the cruiser cannot resolve would slip past every rule above.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    // Node's own resolution for an ESM project: packages' `exports` maps, `import` first.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    exclude: { path: '(^|/)(node_modules|dist)/' },
  },
};
