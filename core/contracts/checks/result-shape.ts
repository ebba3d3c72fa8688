/**
 * @module checks/result-shape
 * The check of what a `tool/shape-result` handler answers (core/contracts/phases.ts ResultShape): the
 * call and the content it was given, unchanged; an observation; at most a media type to keep the content
 * apart under, and a request for the raw copy. Copied to plain data: the kernel acts on the copy only,
 * never on an object a handler could change after the check. What the kernel then stores is
 * core/kernel/artifacts.ts.
 */
import type { ResultShape } from '../phases.ts'
import { bad, describe, own, type Checked } from '../check.ts'

/** What the kernel takes of a handler's answer. */
export interface ShapeAnswer {
  observation: string
  /** Keep the content apart as an artifact of this media type. */
  mediaType?: string
  /** Keep the raw result apart too, audit-only (the kernel does only for a redacted result). */
  keepRaw: boolean
}

/** `type/subtype`, with parameters (`text/plain; charset=utf-8`). */
const MediaType = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:; ?[\w!#$&^.+-]+=[\w!#$&^.+-]+)*$/

/** `kept`: the agent's store keeps artifacts (store contract 2.3.0); without it nothing may be kept apart. */
export function checkResultShape(answer: unknown, was: ResultShape, kept: boolean): Checked<ShapeAnswer> {
  const o = own(answer)
  if (!o) return bad(`a tool/shape-result handler returns the shape ({ ...shape, observation, artifact? }), got ${describe(answer)}`)
  if (o.actionId !== was.actionId || o.tool !== was.tool || o.content !== was.content)
    return bad('a tool/shape-result handler may not change actionId, tool or content')
  if (typeof o.observation !== 'string') return bad(`observation must be a string, got ${describe(o.observation)}`)
  if (o.keepRaw !== undefined && typeof o.keepRaw !== 'boolean') return bad(`keepRaw must be true or false, got ${describe(o.keepRaw)}`)
  const artifact = o.artifact === undefined ? undefined : own(o.artifact)
  const mediaType = artifact?.mediaType
  if (o.artifact !== undefined && !(typeof mediaType === 'string' && mediaType.length <= 200 && MediaType.test(mediaType)))
    return bad(`artifact must be { mediaType: "type/subtype" }, got ${describe(o.artifact)}`)
  if ((artifact || o.keepRaw) && !kept) return bad("the agent's store keeps no artifacts (store contract 2.3.0): the result stays inline")
  return {
    ok: true,
    value: { observation: o.observation, keepRaw: o.keepRaw === true, ...(artifact ? { mediaType: mediaType as string } : {}) },
  }
}
