/**
 * @module scrubbed-deltas
 * A model's streamed pieces, scrubbed of secrets before anyone sees them: its text, and each tool call's
 * argument text, pass through their own {@link StreamScrubber}, which holds back the end of what arrived
 * until it knows no secret is split there; `end` gives out the rest once the answer is complete.
 */
import type { ModelDelta } from '../contracts/services/model.ts'
import { type Scrubber, StreamScrubber } from './secrets.ts'

export type DeltaSink = ((delta: ModelDelta) => void) & { end(): void }

/** Where to push the pieces of one answer, for `emit` to receive them scrubbed (as they are without active secrets). */
export function scrubbedDeltas(scrubber: Scrubber, emit: (delta: ModelDelta) => void): DeltaSink {
  if (!scrubber.active) return Object.assign(emit, { end() {} })
  const text = new StreamScrubber(scrubber)
  const args = new Map<number, StreamScrubber>()
  const push = (delta: ModelDelta) => {
    if (delta.text !== undefined) {
      const ready = text.push(delta.text)
      if (ready) emit({ text: ready })
    }
    if (!delta.toolCall) return
    const { index, name, argsDelta } = delta.toolCall
    let stream = args.get(index)
    if (!stream) args.set(index, (stream = new StreamScrubber(scrubber)))
    const ready = argsDelta === undefined ? undefined : stream.push(argsDelta)
    if (name !== undefined || ready)
      emit({
        toolCall: { index, ...(name === undefined ? {} : { name: scrubber.scrubText(name) }), ...(ready ? { argsDelta: ready } : {}) },
      })
  }
  const end = () => {
    const rest = text.end()
    if (rest) emit({ text: rest })
    for (const [index, stream] of args) {
      const tail = stream.end()
      if (tail) emit({ toolCall: { index, argsDelta: tail } })
    }
  }
  return Object.assign(push, { end })
}
