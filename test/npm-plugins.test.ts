/**
 * npm packages as a plugin source: a package in the project's node_modules whose package.json has a
 * `"cordage"` field is found by the catalogue and named in a preset like a built-in plugin, by its
 * manifest name and a version range. The project here is a temp folder with a real node_modules laid
 * out by hand (no network): a scoped package, an npm alias holding an older version of the same plugin,
 * packages whose declaration is broken, and one that is no plugin at all.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { CordageError } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { PluginCatalog } from '../core/host/catalog.ts'
import { tempDir } from './temp.ts'
import { cordageBin as bin } from './bin.ts'

function write(file: string, text: string | object) {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, typeof text === 'string' ? text : JSON.stringify(text, null, 2))
}

/** A greeter plugin package: `version` decides the manifest version, the package version and its greeting. */
function greeterPackage(dir: string, name: string, version: string, lang: 'js' | 'ts') {
  write(join(dir, 'package.json'), {
    name,
    version,
    type: 'module',
    main: `./dist/index.${lang}`,
    cordage: { plugin: `./dist/index.${lang}`, manifest: `./dist/manifest.${lang}` },
  })
  write(
    join(dir, `dist/manifest.${lang}`),
    `import { Schema } from 'cordis'
export default {
  name: 'greeter', version: '${version}', requires: { tools: '^1.0.0' },
  config: Schema.object({ greeting: Schema.string().default('Hello') }),
}
`,
  )
  write(
    join(dir, `dist/index.${lang}`),
    `import { z } from 'zod'
import { definePlugin, defineTool } from 'cordage'
import manifest from './manifest.${lang}'
export default definePlugin(manifest, (ctx, config${lang === 'ts' ? ': { greeting: string }' : ''}) => {
  ctx.tools.register(defineTool({
    name: 'greet', description: 'Greet someone.', input: z.object({ name: z.string() }), sideEffect: 'none',
    run: ({ name }) => ({ output: \`\${config.greeting}, \${name}! [source: greeter ${version}]\` }),
  }))
})
`,
  )
}

/** A temp project: package.json with its dependencies, and node_modules as npm would lay it out. */
function project(): { dir: string; preset: (agents: Record<string, unknown>) => string } {
  const dir = tempDir('cordage-npm-')
  write(join(dir, 'package.json'), {
    name: 'my-agents',
    private: true,
    type: 'module',
    dependencies: {
      '@acme/greeter': '^0.4.0',
      'left-pad': '^1.3.0',
      'bad-field': '1.0.0',
      '@acme/bad-manifest': '1.0.0',
      'not-installed': '^1.0.0',
    },
    devDependencies: { 'greeter-v3': 'npm:@acme/greeter@~0.3.0' },
  })
  greeterPackage(join(dir, 'node_modules/@acme/greeter'), '@acme/greeter', '0.4.0', 'js')
  greeterPackage(join(dir, 'node_modules/greeter-v3'), '@acme/greeter', '0.3.1', 'ts')
  // Not a plugin: no "cordage" field, never imported.
  write(join(dir, 'node_modules/left-pad/package.json'), { name: 'left-pad', version: '1.3.0', main: 'index.js' })
  write(join(dir, 'node_modules/left-pad/index.js'), 'throw new Error("left-pad must not be imported")\n')
  // Declares a plugin, but the module it names is not there.
  write(join(dir, 'node_modules/bad-field/package.json'), {
    name: 'bad-field',
    version: '1.0.0',
    type: 'module',
    cordage: { plugin: './dist/index.js' },
  })
  // Declares a plugin whose manifest is malformed.
  write(join(dir, 'node_modules/@acme/bad-manifest/package.json'), {
    name: '@acme/bad-manifest',
    version: '1.0.0',
    type: 'module',
    cordage: { plugin: './index.js' },
  })
  write(join(dir, 'node_modules/@acme/bad-manifest/manifest.js'), "export default { name: 'bad-manifest', version: 'one' }\n")
  write(join(dir, 'node_modules/@acme/bad-manifest/index.js'), 'export default {}\n')
  // Installed but not a dependency of the project: not looked at.
  greeterPackage(join(dir, 'node_modules/stray-greeter'), 'stray-greeter', '9.0.0', 'js')
  return {
    dir,
    preset: (agents) => {
      const file = join(dir, 'agents.yml')
      writeFileSync(file, stringify({ agents }))
      return file
    },
  }
}

const base = (greeter: Record<string, unknown>, name = 'Ada') => ({
  model: { plugin: 'model-scripted', config: { script: [{ tool: 'greet', args: { name } }, { final: `Hi ${name} [source: greeter]` }] } },
  plugins: [
    'store-memory',
    'tools-registry',
    'context-basic',
    'verifier-basic',
    { plugin: 'policy-rules', config: { rules: [{ id: 'all', verdict: 'allow' }] } },
    { plugin: 'greeter', ...greeter },
  ],
})

async function greeting(app: Cordage, agent: string): Promise<{ output: unknown; producer: string }> {
  const runtime = app.agent(agent)
  const state = await runtime.run('greet')
  assert.equal(state.status, 'COMPLETED', state.reason)
  const end = (await runtime.store().load(state.runId)).find((e) => e.type === 'tool/end')
  assert.ok(end?.type === 'tool/end')
  return { output: end.data.output, producer: end.producer! }
}

describe('plugins from npm packages', () => {
  it('finds the plugin packages among the project dependencies, beside the built-in plugins', async () => {
    const { dir } = project()
    const catalog = await PluginCatalog.scan(undefined, { project: join(dir, 'presets-folder-that-need-not-exist') })
    const greeters = catalog.entries().filter((e) => e.manifest.name === 'greeter')
    assert.deepEqual(
      greeters.map((e) => [e.manifest.version, e.package?.dependency, e.package?.name]),
      [
        ['0.4.0', '@acme/greeter', '@acme/greeter'],
        ['0.3.1', 'greeter-v3', '@acme/greeter'],
      ],
    )
    assert.equal(catalog.find('greeter', '*').manifest.version, '0.4.0')
    assert.equal(catalog.find('greeter', '~0.3.0').manifest.version, '0.3.1')
    assert.ok(catalog.find('greeter', '~0.3.0').entry.endsWith('greeter-v3/dist/index.ts'))
    assert.ok(
      !catalog.entries().some((e) => e.manifest.name === 'stray-greeter' || e.manifest.version === '9.0.0'),
      'not a dependency, not scanned',
    )
    assert.ok(catalog.find('policy-rules', '^2.0.0').dir.endsWith('plugins/policy-rules'), 'built-ins are still there')
    assert.deepEqual(
      catalog
        .brokenPackages()
        .map((b) => b.dependency)
        .sort(),
      ['@acme/bad-manifest', 'bad-field'],
    )
    const none = await PluginCatalog.scan(undefined, { project: false })
    assert.ok(!none.entries().some((e) => e.package))
  })

  it('runs an agent with the npm plugin by name and range; two agents run two versions side by side', async () => {
    const { dir, preset } = project()
    const file = preset({ newer: base({ version: '^0.4.0', config: { greeting: 'Howdy' } }), older: base({ version: '~0.3.0' }, 'Bo') })
    const app = await Cordage.fromPreset(file, { catalog: await PluginCatalog.scan(undefined, { project: dir }) })
    assert.equal(app.pluginsOf('newer').greeter, '0.4.0')
    assert.equal(app.pluginsOf('older').greeter, '0.3.1')
    assert.deepEqual(await greeting(app, 'newer'), { output: 'Howdy, Ada! [source: greeter 0.4.0]', producer: 'greeter@0.4.0' })
    assert.deepEqual(await greeting(app, 'older'), { output: 'Hello, Bo! [source: greeter 0.3.1]', producer: 'greeter@0.3.1' })
    await app.stop()
  })

  it("checks the preset's config against the package's schema", async () => {
    const { dir, preset } = project()
    const file = preset({ a: base({ version: '^0.4.0', config: { greeting: 7 } }) })
    await assert.rejects(
      Cordage.fromPreset(file, { catalog: await PluginCatalog.scan(undefined, { project: dir }) }),
      (error: CordageError) => {
        assert.equal(error.code, 'plugin_config_invalid')
        assert.match(error.message, /agents\.a\.plugins\[5\]\.config\.greeting: plugin greeter@0\.4\.0: expected string but got 7/)
        return true
      },
    )
  })

  it('says which versions are installed, and from which package, when the range admits none', async () => {
    const { dir, preset } = project()
    const file = preset({ a: base({ version: '^1.0.0' }) })
    await assert.rejects(Cordage.fromPreset(file, { catalog: await PluginCatalog.scan(undefined, { project: dir }) }), {
      code: 'plugin_version_unsatisfiable',
      message:
        /agents\.a\.plugins\[5\]: no installed version of "greeter" satisfies \^1\.0\.0 \(installed: 0\.4\.0 \(npm @acme\/greeter\), 0\.3\.1 \(npm greeter-v3\)\)/,
    })
  })

  it('refuses a package that declares a plugin with a bad manifest, naming the package and what is wrong', async () => {
    const { dir, preset } = project()
    const catalog = await PluginCatalog.scan(undefined, { project: dir })
    const bad = (name: string) => preset({ a: { ...base({ version: '^0.4.0' }), plugins: [...base({}).plugins.slice(0, 5), name] } })
    await assert.rejects(Cordage.fromPreset(bad('bad-manifest'), { catalog }), {
      code: 'manifest_invalid',
      message:
        /no plugin named "bad-manifest" is installed: package @acme\/bad-manifest \(.*node_modules\/@acme\/bad-manifest\/package\.json\) declares a Cordage plugin, but plugin "bad-manifest" .* has an invalid manifest.*version: expected a semver version such as 1\.0\.0, found "one"/s,
    })
    await assert.rejects(Cordage.fromPreset(bad('bad-field'), { catalog }), {
      code: 'manifest_invalid',
      message:
        /package bad-field \(.*\) declares a Cordage plugin, but "cordage\.plugin" names \.\/dist\/index\.js, which does not exist in the package/,
    })
    // Any other name that is not found mentions the broken packages and the dependency not installed.
    await assert.rejects(Cordage.fromPreset(bad('not-installed'), { catalog }), {
      code: 'plugin_not_found',
      message:
        /no plugin named "not-installed" is installed.*the project depends on not-installed, which is not in node_modules \(run npm install\).*packages declare a plugin but cannot be used: @acme\/bad-manifest/s,
    })
  })

  it('explains each malformed "cordage" field', async () => {
    const cases: [unknown, RegExp][] = [
      [
        './index.js',
        /its "cordage" field is "\.\/index\.js", expected an object such as \{"cordage": \{"plugin": "\.\/index\.js", "manifest": "\.\/manifest\.js"\}\}/,
      ],
      [{}, /"cordage\.plugin" is missing, expected the module that default-exports the plugin/],
      [{ plugin: './index.js', entry: 'x' }, /unknown key\(s\) "entry"; allowed: "plugin", "manifest"/],
      [{ plugin: '../../outside.js' }, /"cordage\.plugin" \(\.\.\/\.\.\/outside\.js\) points outside the package/],
      [{ plugin: './index.js', manifest: './nope.js' }, /"cordage\.manifest" names \.\/nope\.js, which does not exist/],
    ]
    for (const [field, message] of cases) {
      const dir = tempDir('cordage-npm-field-')
      write(join(dir, 'package.json'), { dependencies: { p: '1.0.0' } })
      write(join(dir, 'node_modules/p/package.json'), { name: 'p', version: '1.0.0', type: 'module', cordage: field })
      write(join(dir, 'node_modules/p/index.js'), 'export default {}\n')
      const catalog = await PluginCatalog.scan(undefined, { project: dir })
      assert.throws(() => catalog.find('p', '*'), { code: 'manifest_invalid', message }, JSON.stringify(field))
    }
    // Versions must agree, and the package must be an ES module package.
    const dir = tempDir('cordage-npm-field-')
    write(join(dir, 'package.json'), { dependencies: { '@x/greeter': '1.0.0', cjs: '1.0.0' } })
    greeterPackage(join(dir, 'node_modules/@x/greeter'), '@x/greeter', '0.5.0', 'js')
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules/@x/greeter/package.json'), 'utf8'))
    write(join(dir, 'node_modules/@x/greeter/package.json'), { ...pkg, version: '0.5.1' })
    greeterPackage(join(dir, 'node_modules/cjs'), 'cjs', '1.0.0', 'js')
    const cjs = JSON.parse(readFileSync(join(dir, 'node_modules/cjs/package.json'), 'utf8'))
    write(join(dir, 'node_modules/cjs/package.json'), { ...cjs, type: undefined })
    const catalog = await PluginCatalog.scan(undefined, { project: dir })
    assert.throws(() => catalog.find('greeter', '*'), {
      code: 'manifest_invalid',
      message: /package @x\/greeter .* its manifest says version 0\.5\.0 and its package\.json 0\.5\.1; they must be the same/,
    })
    assert.throws(() => catalog.find('cjs', '*'), { code: 'manifest_invalid', message: /package cjs .* is not an ES module package/ })
  })

  it('refuses a package that installs a version already installed elsewhere, only when that version is asked for', async () => {
    const dir = tempDir('cordage-npm-twice-')
    write(join(dir, 'package.json'), { dependencies: { 'policy-rules': '2.1.0', 'policy-rules-9': '9.0.0' } })
    for (const [folder, version] of [
      ['policy-rules', '2.1.0'],
      ['policy-rules-9', '9.0.0'],
    ]) {
      write(join(dir, 'node_modules', folder, 'package.json'), { name: folder, version, type: 'module', cordage: { plugin: './index.js' } })
      write(
        join(dir, 'node_modules', folder, 'manifest.js'),
        `export default { name: 'policy-rules', version: '${version}', provides: { policy: '1.0.0' } }\n`,
      )
      write(join(dir, 'node_modules', folder, 'index.js'), 'export default {}\n')
    }
    const catalog = await PluginCatalog.scan(undefined, { project: dir })
    // Built-in 1.0.0 and 2.1.0, and 9.0.0 from npm, side by side.
    assert.equal(catalog.find('policy-rules', '^9.0.0').package?.dependency, 'policy-rules-9')
    assert.ok(!catalog.find('policy-rules', '^1.0.0').package)
    assert.throws(() => catalog.find('policy-rules', '^2.0.0'), {
      code: 'plugin_conflict',
      message: /policy-rules@2\.1\.0 is installed twice: .*plugins\/policy-rules and .*node_modules\/policy-rules/,
    })
  })

  it('works from the command line in the project: check, lock, and a run that uses the package tool', () => {
    const { dir, preset } = project()
    preset({ newer: base({ version: '^0.4.0', config: { greeting: 'Howdy' } }), older: base({ version: '~0.3.0' }, 'Bo') })
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    const check = cli('check', '--preset', 'agents.yml')
    assert.equal(check.status, 0, check.stderr)
    const lock = cli('lock', '--preset', 'agents.yml')
    assert.equal(lock.status, 0, lock.stderr)
    assert.match(lock.stdout, /greeter@0\.4\.0 +sha256:/)
    assert.match(lock.stdout, /greeter@0\.3\.1 +sha256:/)
    assert.ok(existsSync(join(dir, 'agents.lock.json')))
    const run = cli('run', '--preset', 'agents.yml', '--agent', 'older', '--task', 'greet Bo', '--json')
    assert.equal(run.status, 0, run.stderr)
    const end = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e) => e.type === 'tool/end')
    assert.equal(end.data.output, 'Hello, Bo! [source: greeter 0.3.1]')
    assert.equal(end.producer, 'greeter@0.3.1')
  })
})
