/**
 * @module cli/commands/grants
 * `cordage grants` lists standing grants (approvals that hold across runs); `cordage revoke GRANT`
 * withdraws one, so the calls it covered are asked about again.
 */
import { CordageError } from '../../contracts/errors.ts'
import { ExitCodes } from '../exit-codes.ts'
import { formatGrant } from '../format.ts'
import { hint } from '../hints.ts'
import { knownAgent, open } from '../open.ts'
import type { Handler } from '../output.ts'

export const grants: Handler = async ({ flags }, io) => {
  const app = await open(io, flags, 'stores')
  try {
    knownAgent(app, flags.agent as string | undefined)
    let listed = 0
    for (const name of app.agentNames()) {
      if (flags.agent && name !== flags.agent) continue
      for (const grant of await app.agent(name).grants({ inactive: !!flags.all })) {
        listed++
        io.out(flags.json ? JSON.stringify(grant) : formatGrant(grant))
      }
    }
    if (!listed && !flags.json) io.err(`no ${flags.all ? '' : 'active '}grants in the stores of ${app.preset.shown}`)
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}

export const revoke: Handler = async ({ flags, positionals: [id] }, io) => {
  const app = await open(io, flags, 'stores')
  try {
    knownAgent(app, flags.agent as string | undefined)
    const agents = app.agentNames().filter((n) => !flags.agent || n === flags.agent)
    for (const name of agents) {
      const found = (await app.agent(name).grants({ inactive: true })).find((g) => g.id === id)
      if (!found) continue
      const grant = await app
        .agent(name)
        .revokeGrant(id, { by: (flags.by as string | undefined) ?? 'cli', reason: flags.reason as string | undefined })
      io.out(flags.json ? JSON.stringify(grant) : `revoked ${formatGrant(grant)}`)
      return ExitCodes.ok
    }
    throw new CordageError(
      'invalid_input',
      `no grant ${id} in the stores of ${app.preset.shown} (${hint('grants', [], flags, '--all')} lists them)`,
    )
  } finally {
    await app.stop()
  }
}
