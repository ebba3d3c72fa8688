/**
 * @module step-tools
 * The step's visible tools (core/kernel/visible-tools.ts), asked of the tools service once per step
 * (also for a step resumed in a new process) and passed by the run's `tools/before-show` handlers,
 * whose answer must keep the same tools in the same order.
 */
import { shownToolsProblem } from '../contracts/checks/tool-views.ts'
import { intercepted, serial } from './phases.ts'
import type { Run } from './run.ts'

/** Nothing to wait for (undefined) when the list was asked for this step already, or when the service and the handlers answer at once. */
export function refreshTools(run: Run): Promise<void> | undefined {
  const step = `s${run.state.steps}`
  if (run.visible.step === step) return
  const tools = run.services.tools
  return run.visible.refresh(
    step,
    tools.provider,
    () => run.ask('tools', tools.provider, () => tools.value.visible({ state: run.view })),
    (was) => (intercepted(run, 'tools/before-show') ? serial(run, 'tools/before-show', was, (v) => shownToolsProblem(v, was)) : was),
  )
}
