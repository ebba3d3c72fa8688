/**
 * @module run-preview
 * A tool's preview of one call, bounded in time: by the tool's own timeoutMs, the plugin's limitMs,
 * the time its phase handler has (`serviceTimeouts.phases`, so the preview's failure is answered
 * before the kernel gives up on the handler) and the run's deadline. A preview that throws, overruns
 * or answers something that is not a Preview is a failed outcome (the person is still asked); the
 * run's own end (cancelled, past its deadline) is thrown, not recorded as the preview's failure.
 */
import { CordageError, checkPreview, type PhaseInfo, type PreviewOutcome, type Tool } from 'cordage'

/** Left of the handler's time limit for the kernel to take the answer. */
const MarginMs = 100

export async function runPreview(tool: Tool, args: unknown, actionId: string, info: PhaseInfo, limitMs: number): Promise<PreviewOutcome> {
  if (typeof tool.preview !== 'function') return { status: 'unavailable' }
  const limit = Math.max(0, Math.min(tool.timeoutMs > 0 ? tool.timeoutMs : limitMs, limitMs, info.timeoutMs - MarginMs))
  const deadline = info.state.deadline
  const byDeadline = deadline !== undefined && deadline - Date.now() < limit
  const ms = Math.max(0, byDeadline ? deadline! - Date.now() : limit)
  const controller = new AbortController()
  const t0 = performance.now()
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = byDeadline
        ? new CordageError('deadline_exceeded', `the deadline passed while ${tool.name}'s preview was running`)
        : new CordageError('service_timeout', `${tool.name}'s preview did not answer within ${ms} ms`)
      controller.abort(error)
      reject(error)
    }, ms)
    onAbort = () => {
      controller.abort(info.signal.reason)
      reject(info.signal.reason)
    }
    if (info.signal.aborted) onAbort()
    else info.signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    const io = { runId: info.runId, actionId, signal: controller.signal }
    const answer = await Promise.race([Promise.resolve().then(() => tool.preview!(args, io)), stop])
    const checked = checkPreview(answer)
    if (!checked.ok) return failed('verdict_invalid', `${tool.name}'s preview answered something that is not a preview: ${checked.problem}`)
    return { status: 'ok', preview: checked.value, durationMs: Math.round(performance.now() - t0) }
  } catch (error) {
    if (info.signal.aborted && error === info.signal.reason) throw error
    if (CordageError.is(error, 'deadline_exceeded') && byDeadline) throw error
    if (CordageError.is(error, 'service_timeout')) return failed('service_timeout', error.message)
    return failed('tool_failed', `${tool.name}'s preview failed: ${(error as Error)?.message ?? String(error)}`)
  } finally {
    clearTimeout(timer)
    if (onAbort) info.signal.removeEventListener('abort', onAbort)
    stop.catch(() => {})
  }
}

function failed(code: 'verdict_invalid' | 'service_timeout' | 'tool_failed', message: string): PreviewOutcome {
  return { status: 'failed', code, message: message.length > 1000 ? `${message.slice(0, 999)}…` : message }
}
