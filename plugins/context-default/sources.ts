/**
 * Sources: reference material the preset gives the agent, read once when the plugin starts. A file is
 * split into paragraphs so the budget can drop the last ones first and each paragraph can say where it
 * came from (`file:docs/policy.md#2` is the second paragraph); a note is one item (`note:<name>`).
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { CordageError } from 'cordage'
import type { SourceConfig } from './manifest.ts'

export interface SourceItem {
  /** Provenance: `file:<path as configured>#<paragraph>` or `note:<name>`. */
  ref: string
  /** What the model sees: the text, labelled with where it came from. */
  text: string
}

export function loadSources(sources: SourceConfig[], baseDir: string): SourceItem[] {
  const items: SourceItem[] = []
  sources.forEach((source, i) => {
    if ((source.file === undefined) === (source.note === undefined)) {
      throw new CordageError('plugin_config_invalid', `context-default: sources[${i}] must have exactly one of file and note`)
    }
    if (source.note !== undefined) {
      const name = source.name ?? String(i + 1)
      items.push({ ref: `note:${name}`, text: `[note ${name}] ${source.note.trim()}` })
      return
    }
    const path = source.file!.replaceAll('\\', '/')
    let text: string
    try {
      text = readFileSync(resolve(baseDir, path), 'utf8')
    } catch (error) {
      throw new CordageError(
        'plugin_config_invalid',
        `context-default: cannot read source file ${resolve(baseDir, path)}: ${(error as Error).message}`,
        { cause: error },
      )
    }
    paragraphs(text).forEach((paragraph, n) => items.push({ ref: `file:${path}#${n + 1}`, text: `[${path}#${n + 1}] ${paragraph}` }))
  })
  return items
}

/** Blocks separated by blank lines; a block that is only a heading stays with the block after it. */
export function paragraphs(text: string): string[] {
  const blocks = text
    .replaceAll('\r\n', '\n')
    .split(/\n[ \t]*\n/)
    .map((b) => b.trim())
    .filter(Boolean)
  const out: string[] = []
  let heading = ''
  for (const block of blocks) {
    if (/^#{1,6} [^\n]*$/.test(block)) {
      heading = heading ? `${heading}\n${block}` : block
      continue
    }
    out.push(heading ? `${heading}\n${block}` : block)
    heading = ''
  }
  if (heading) out.push(heading)
  return out
}
