/**
 * @module checks/tool
 * A tool's definition (services/tools.ts ToolDefinition) checked before {@link defineTool} builds the tool
 * (core/kernel/tool.ts), and what the tool's functions of its arguments see: the arguments as its schema
 * parses them.
 */
import { CordageError } from '../errors.ts'
import type { Preview } from '../data.ts'
import type { PreviewIO, ToolDefinition } from '../services/tools.ts'

const NamePattern = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/

/** A definition's name and side-effect class, checked before the tool exists. */
export function checkDefinition(def: Pick<ToolDefinition<unknown>, 'name' | 'sideEffect' | 'artifactAboveBytes'>): void {
  const above = def.artifactAboveBytes
  if (above !== undefined && !(Number.isSafeInteger(above) && above > 0)) {
    throw new CordageError(
      'invalid_input',
      `tool "${def.name}": artifactAboveBytes must be a whole number of bytes of at least 1, got ${JSON.stringify(above)}`,
    )
  }
  if (!NamePattern.test(def.name)) {
    throw new CordageError(
      'invalid_input',
      `tool name "${def.name}" must match ${NamePattern} (letters, digits, _ and -, starting with a letter)`,
    )
  }
  if (!['none', 'local', 'external'].includes(def.sideEffect)) {
    throw new CordageError(
      'invalid_input',
      `tool "${def.name}": sideEffect must be none, local or external, got ${JSON.stringify(def.sideEffect)}`,
    )
  }
}

/** `fn` of the arguments as the tool's schema parses them; `fallback` for arguments it refuses. */
export function onParsed<A, R>(input: ToolDefinition<A>['input'], fn: (args: A) => R, fallback: R): (args: unknown) => R {
  return (args: unknown) => {
    const parsed = input.safeParse(args)
    return parsed.success ? fn(parsed.data) : fallback
  }
}

/** The definition's preview, of the arguments as the schema parses them (arguments it refuses are the preview's failure). */
export function previewOnParsed<A>(name: string, input: ToolDefinition<A>['input'], preview: NonNullable<ToolDefinition<A>['preview']>) {
  return async (args: unknown, io: PreviewIO): Promise<Preview> => {
    const parsed = input.safeParse(args)
    if (!parsed.success) throw new CordageError('invalid_arguments', `arguments for ${name} do not match its schema`)
    return await preview(parsed.data, io)
  }
}
