/**
 * Who may import whom (docs/concepts/architecture.md#layers), checked in CI by `npm run check:layers`.
 * Type-only imports count: a cycle of types is a cycle.
 */
const layer = (name, allowed) => ({
  name: `${name}-imports`,
  comment: `${name} may import only: ${allowed.join(', ')}`,
  severity: 'error',
  from: { path: `^core/${name}/` },
  to: { path: '^(core|plugins|test|bench)/', pathNot: allowed.map((a) => `^${a}`) },
})

module.exports = {
  forbidden: [
    {
      // A dynamic import is how a module loads on demand what sits above it (the table of modules shared
      // with hot-reloaded plugins, core/host/reload-build.ts): a cycle only through one is allowed.
      name: 'no-circular',
      comment: 'no import cycles, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['dynamic-import'] } },
    },
    layer('contracts', ['core/contracts/']),
    layer('kit', ['core/kit/', 'core/contracts/']),
    layer('kernel', ['core/kernel/', 'core/kit/', 'core/contracts/']),
    layer('wire', ['core/wire/', 'core/index.ts', 'core/kit/', 'core/contracts/']),
    layer('host', ['core/host/', 'core/index.ts', 'core/kernel/', 'core/kit/', 'core/contracts/', 'core/wire/']),
    layer('eval', ['core/eval/', 'core/host/', 'core/index.ts', 'core/kit/', 'core/contracts/', 'core/wire/']),
    layer('testing', ['core/testing/', 'core/host/', 'core/index.ts', 'core/kit/', 'core/contracts/']),
    layer('cli', ['core/cli/', 'core/eval/', 'core/host/', 'core/index.ts', 'core/kernel/', 'core/kit/', 'core/contracts/', 'core/wire/']),
    {
      name: 'plugins-public-only',
      comment: 'a plugin imports the public entry points (cordage, cordage/kit, cordage/wire), its own folder and packages; never another plugin, the host or kernel files',
      severity: 'error',
      from: { path: '^plugins/([^/]+)/', pathNot: '^plugins/[^/]+/test/' },
      to: { path: '^(core|plugins|playground)/', pathNot: ['^core/index\\.ts$', '^core/kit/index\\.ts$', '^core/wire/index\\.ts$', '^plugins/$1/'] },
    },
    {
      name: 'eval-plugins-public-only',
      comment: 'the plugins cordage eval puts in (core/eval/plugins) are plugins like any other: public entry points, their own folder and packages',
      severity: 'error',
      from: { path: '^core/eval/plugins/([^/]+)/' },
      to: { path: '^(core|plugins|playground)/', pathNot: ['^core/index\\.ts$', '^core/kit/index\\.ts$', '^core/wire/index\\.ts$', '^core/eval/plugins/$1/'] },
    },
    {
      name: 'playground-public-only',
      comment: 'the playground is an app on the public API: cordage, cordage/host, cordage/eval, cordage/kit, cordage/wire',
      severity: 'error',
      from: { path: '^playground/' },
      to: { path: '^(core|plugins)/', pathNot: ['^core/index\\.ts$', '^core/host/index\\.ts$', '^core/eval/index\\.ts$', '^core/kit/index\\.ts$', '^core/wire/index\\.ts$'] },
    },
    {
      name: 'core-not-on-apps',
      comment: 'nothing in core imports plugins or the playground (the CLI loads the playground through a dynamic import of its public entry)',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(plugins|playground)/', dependencyTypesNot: ['dynamic-import'] },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|\\.stryker-tmp|^reports/|^coverage/' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'default', 'node'] },
    includeOnly: '^(core|plugins|playground)/',
  },
}
