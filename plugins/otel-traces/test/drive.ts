/**
 * A process of its own for the OTLP test: loads the preset (the built-in catalogue, so otel-traces is
 * the plugin a preset gets), then either runs the agent until it pauses or approves an action and lets
 * the run finish, stops the app and returns. Prints {runId, status} as JSON. The process ends when the
 * event loop is empty, which is after the plugin's last export: that is what the test checks.
 *
 * usage: node --import tsx drive.ts PRESET run | approve RUN ACTION
 */
import { Cordage } from 'cordage/host'

const [file, command, runId, actionId] = process.argv.slice(2)
const app = await Cordage.fromPreset(file, { log: (line) => process.stderr.write(`${line}\n`) })
const agent = app.agent('support')
const state = command === 'run' ? await agent.run() : await (await agent.approve(runId, actionId, { by: 'alice' })).done
await app.stop()
process.stdout.write(`${JSON.stringify({ runId: state.runId, status: state.status })}\n`)
