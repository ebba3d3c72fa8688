/**
 * The loop is a pipeline, not a hub (issue 28, decision 18): its stages take one `Run`
 * (core/kernel/run.ts) and return what comes next as data; none calls back into the driver. These
 * checks read the kernel's sources, so a port interface or a stage callback on the run that comes back
 * fails here, with where.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import ts from 'typescript'

const kernel = resolve(import.meta.dirname, '../../core/kernel')
const sources = readdirSync(kernel)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, source: ts.createSourceFile(f, readFileSync(join(kernel, f), 'utf8'), ts.ScriptTarget.Latest, true) }))

/** What the runtime's commands take of AgentRuntime: the runtime's own, not a stage of the loop. */
const RuntimeInterfaces = new Set(['LeasePort', 'RuntimePort'])

/** The stages a run used to be asked to run through callbacks (RunDriver.pause, .end, ...). */
const Stages = ['pause', 'end', 'endCancelled', 'reject', 'verify', 'step', 'guard', 'screenOutput', 'visibleTools', 'lostKeyRace']

describe('the kernel is a pipeline, not a hub', () => {
  it('declares no port interface for the loop: every stage takes the one Run', () => {
    const ports = sources.flatMap(({ file, source }) =>
      source.statements
        .filter((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && /Port$/.test(s.name.text))
        .filter((s) => !RuntimeInterfaces.has(s.name.text))
        .map((s) => `${file}: ${s.name.text}`),
    )
    assert.deepEqual(ports, [])
  })

  it('gives the run no stage to call back: Run holds data and what only the lease holder can do', () => {
    const run = sources.find((s) => s.file === 'run.ts')!.source
    const iface = run.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'Run')
    assert.ok(iface, 'core/kernel/run.ts declares Run')
    const members = iface.members.map((m) => m.name?.getText(run))
    assert.ok(members.includes('flush') && members.includes('state'), 'the reading sees the members')
    assert.deepEqual(
      members.filter((m) => m !== undefined && Stages.includes(m)),
      [],
    )
  })

  it('keeps the driver free of forwards to stages', () => {
    const loop = sources.find((s) => s.file === 'loop.ts')!.source
    const driver = loop.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === 'RunDriver')
    assert.ok(driver, 'core/kernel/loop.ts declares RunDriver')
    const methods = driver.members.filter(ts.isMethodDeclaration).map((m) => m.name.getText(loop))
    assert.ok(methods.includes('drive'), 'the reading sees the methods')
    assert.deepEqual(
      methods.filter((m) => Stages.includes(m)),
      [],
    )
  })
})
