/**
 * npm run bench:profile — where Cordage's per-step time goes. Runs the kernel bench's Cordage subject
 * (50-step runs) for a few seconds under the V8 CPU profiler, then prints the functions with the most
 * self time, grouped by function and file. `--seconds N` changes the duration, `--top N` the list,
 * `--tools N` the number of registered tools (1, as in the kernel bench; 200 for its many-tools
 * variant), `--steps N` the run length. The raw profile is written (open it in Chrome DevTools) when
 * `--out FILE` is given.
 */
import { writeFileSync } from 'node:fs'
import { Session, type Profiler } from 'node:inspector/promises'
import { cordageSubject } from './cordage.ts'
import { numberArg } from './measure.ts'

const seconds = numberArg('--seconds', 4)
const top = numberArg('--top', 30)
const tools = numberArg('--tools', 1)
const length = numberArg('--steps', 50)
const outAt = process.argv.indexOf('--out')

const subject = await cordageSubject(200, tools)
for (let i = 0; i < 200; i++) {
  await subject.run(length)
  await subject.between?.()
}

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.setSamplingInterval', { interval: 100 })
await session.post('Profiler.start')
const end = Date.now() + seconds * 1000
let runs = 0
while (Date.now() < end) {
  await subject.run(length)
  await subject.between?.()
  runs++
}
const { profile } = (await session.post('Profiler.stop')) as { profile: Profiler.Profile }
session.disconnect()
if (outAt > 0) writeFileSync(process.argv[outAt + 1]!, JSON.stringify(profile))

const self = new Map<number, number>()
const deltas = profile.timeDeltas ?? []
for (let i = 0; i < (profile.samples ?? []).length; i++) {
  const id = profile.samples![i]!
  self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0))
}
// The harness is rebuilt between runs (bench/cordage.ts `between`), untimed in the kernel bench: its
// samples are left out here too, and their total reported apart.
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const isRebuild = (node: Profiler.ProfileNode) =>
  node.callFrame.functionName === 'between' && node.callFrame.url.endsWith('bench/cordage.ts')
const byFunction = new Map<string, number>()
let total = 0
let rebuilds = 0
const walk = (node: Profiler.ProfileNode, rebuild: boolean) => {
  rebuild ||= isRebuild(node)
  const t = self.get(node.id) ?? 0
  if (rebuild) rebuilds += t
  else {
    total += t
    const f = node.callFrame
    const file = f.url.replace(/^.*\/(node_modules\/[^/]+|core|plugins|bench)\//, '$1/')
    const key = `${f.functionName || '(anonymous)'}  ${file}${f.url ? `:${f.lineNumber + 1}` : ''}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + t)
  }
  for (const child of node.children ?? []) walk(byId.get(child)!, rebuild)
}
walk(profile.nodes[0]!, false)
const steps = runs * length
console.log(
  `${runs} runs of ${length} steps with ${tools} tool${tools === 1 ? '' : 's'} in ${seconds} s: ${(total / steps).toFixed(1)} us of samples per step` +
    ` (harness rebuilds between runs, left out: ${(rebuilds / steps).toFixed(1)} us/step)\n`,
)
console.log('self %   us/step  function  file:line')
for (const [key, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((100 * t) / total).toFixed(1).padStart(6)}  ${(t / steps).toFixed(2).padStart(8)}  ${key}`)
}
