/**
 * The `read_artifact` tool. A result larger than its threshold is stored as an artifact, and the model
 * sees its head and a reference (shape.ts); this tool reads on, a range at a time. It
 * reads only artifacts its own run produced (the store's listing for `io.runId`, never an argument),
 * and never an audit-only one (`audit:sha256:...`, the raw result of a call the guardrail redacted).
 * Its own output is bounded, so it never becomes an artifact itself.
 */
import { z } from 'zod'
import { CordageError, defineTool, parseArtifactRef, type StoreService, type Tool } from 'cordage'
import { charEdges, decode } from './chunk.ts'

export interface ReadResult {
  ref: string
  /** Where the text starts (a character edge at or just after the offset asked for). */
  offset: number
  /** Bytes of the artifact the text holds. */
  bytes: number
  /** The artifact's size in bytes. */
  total: number
  text: string
  /** The offset of the next read; absent at the end. */
  next?: number
}

export function readArtifactTool(store: () => StoreService | undefined, limits: { defaultLength: number; maxLength: number }): Tool {
  return defineTool({
    name: 'read_artifact',
    description:
      'Read part of a large tool result stored as an artifact (the result names its ref and the offset to read on from). Returns the text of the range and `next`, the offset of the following range.',
    input: z
      .object({
        ref: z.string().min(1).max(200).describe('The artifact reference, artifact:sha256:<hex>.'),
        offset: z.number().int().min(0).optional().describe('Byte offset to read from (default 0; use `next` of the previous read).'),
        length: z
          .number()
          .int()
          .min(1)
          .max(limits.maxLength)
          .optional()
          .describe(`Bytes to read (default ${limits.defaultLength}, at most ${limits.maxLength}).`),
      })
      .strict(),
    sideEffect: 'none',
    idempotent: true,
    timeoutMs: 10_000,
    // Its result is at most maxLength bytes of text: never worth an artifact of its own.
    artifactAboveBytes: 4 * 1024 * 1024,
    async run({ ref, offset = 0, length = limits.defaultLength }, io) {
      const log = store()
      if (!log?.artifactsOf || !log.readArtifact)
        throw new CordageError('tool_unavailable', "read_artifact needs a store that keeps artifacts, and this agent's does not")
      let parsed: ReturnType<typeof parseArtifactRef>
      try {
        parsed = parseArtifactRef(ref)
      } catch (error) {
        throw new CordageError('tool_failed', (error as Error).message)
      }
      if (parsed.visibility === 'audit')
        throw new CordageError('tool_failed', `${parsed.ref} is audit-only (a result a guardrail redacted): it is not readable here`)
      const listed = (await log.artifactsOf(io.runId)).find((a) => a.ref === parsed.ref)
      if (!listed)
        throw new CordageError(
          'tool_failed',
          `${parsed.ref} is not an artifact of this run: read_artifact reads only what this run's calls stored`,
        )
      if (offset > listed.bytes)
        throw new CordageError('tool_failed', `offset ${offset} is past the end of ${parsed.ref} (${listed.bytes} bytes)`)
      // Three bytes more than asked, so a character cut at the end can be completed or left whole for the next read.
      const buf = await log.readArtifact(parsed.ref, { offset, length: Math.min(length + 3, listed.bytes - offset) })
      const { start, end } = charEdges(buf, offset, length)
      const from = offset + start
      const until = offset + end
      const result: ReadResult = {
        ref: parsed.ref,
        offset: from,
        bytes: until - from,
        total: listed.bytes,
        text: decode(buf, start, end),
        ...(until < listed.bytes ? { next: until } : {}),
      }
      const tail =
        result.next === undefined
          ? `[bytes ${from}-${until} of ${listed.bytes}: the end of ${parsed.ref}]`
          : `[bytes ${from}-${until} of ${listed.bytes}; read on with read_artifact ${JSON.stringify({ ref: parsed.ref, offset: result.next })}]`
      return { output: result, observation: `${result.text}\n${tail}` }
    },
  })
}
