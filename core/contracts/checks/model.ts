/**
 * @module checks/model
 * A `model` service's answer (services/model.ts) as plain data, once it passed the loop's check of its
 * shape: what the record, the hash, policy and the tool all read from then on.
 */
import { CordageError } from '../errors.ts'
import type { Decision, ModelResponse, ProposedCall } from '../services/model.ts'

/**
 * The model's answer as plain data, made once, right after it passed `checkResponse`: every field read
 * once and copied, each call's arguments copied through JSON. A model plugin's objects can carry
 * `toJSON`, getters, non-enumerable keys or be Proxies, and so look different to the record (which
 * serialises), to the hash, to policy and to the tool. From the copy on, they all see the same data. A
 * call whose arguments cannot be copied (a cycle, a BigInt, a trap that throws) gets an `argsError`.
 */
export function plainResponse(response: ModelResponse): ModelResponse {
  const d = response.decision
  const usage = {
    inputTokens: Number(response.usage.inputTokens),
    outputTokens: Number(response.usage.outputTokens),
    costUsd: Number(response.usage.costUsd),
  }
  const model = response.model === undefined ? undefined : String(response.model)
  let decision: Decision
  if (d.kind === 'final') decision = { kind: 'final', text: String(d.text) }
  else if (d.kind === 'ask_user') decision = { kind: 'ask_user', question: String(d.question) }
  else {
    const calls = [...d.calls].map((c): ProposedCall => {
      const name = String(c.name)
      const callId = c.callId === undefined ? undefined : String(c.callId)
      const argsError = c.argsError === undefined ? undefined : String(c.argsError)
      // Absent fields stay absent (not `undefined` keys): the record reads like what the model said.
      const call = (args: unknown, problem: string | undefined): ProposedCall => ({
        name,
        args,
        ...(callId === undefined ? {} : { callId }),
        ...(problem === undefined ? {} : { argsError: problem }),
      })
      try {
        const text = JSON.stringify(c.args)
        return call(text === undefined ? undefined : JSON.parse(text), argsError)
      } catch (error) {
        return call(null, argsError ?? `the arguments cannot be read as JSON: ${(error as Error)?.message ?? error}`)
      }
    })
    decision = { kind: 'tool_calls', calls, ...(d.text === undefined ? {} : { text: String(d.text) }) }
  }
  const reasoning = plainReasoning(response.reasoning)
  return { decision, usage, ...(model === undefined ? {} : { model }), ...(reasoning === undefined ? {} : { reasoning }) }
}

/**
 * The provider's reasoning copied through JSON, like call arguments. Unlike them it cannot be shown to
 * the model as an error: a provider that gets it back changed refuses the next request, so a copy
 * that fails (or changes its shape) fails the call.
 */
function plainReasoning(reasoning: ModelResponse['reasoning']): ModelResponse['reasoning'] {
  if (reasoning === undefined) return undefined
  let copy: unknown
  try {
    copy = JSON.parse(JSON.stringify({ provider: reasoning.provider, blocks: reasoning.blocks }))
  } catch (error) {
    throw new CordageError('model_invalid_response', `the reasoning cannot be read as JSON: ${(error as Error)?.message ?? error}`)
  }
  const plain = copy as NonNullable<ModelResponse['reasoning']>
  if (typeof plain.provider !== 'string' || !Array.isArray(plain.blocks) || plain.blocks.length !== reasoning.blocks.length)
    throw new CordageError('model_invalid_response', 'the reasoning changes when copied as JSON (a block that is not plain data)')
  return plain
}
