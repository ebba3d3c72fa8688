/**
 * The token counter of an OpenAI model: its own tokenizer when the model's family is known (gpt-tokenizer,
 * one encoding loaded, only when used: o200k_base alone is a few hundred milliseconds to load), else the
 * kit's estimate calibrated on the usage the server reports (a compatible server runs models whose
 * tokenizer this plugin cannot know).
 */
import type { TokenCounter } from 'cordage'

export type Encoding = 'o200k_base' | 'cl100k_base'

/** The `tokenizer` config: an encoding, `auto` (by the model's name), or `estimate` (calibrated on usage). */
export type TokenizerChoice = Encoding | 'auto' | 'estimate'

/**
 * The encoding of an OpenAI model by its name, or undefined for a name this plugin does not know.
 * @example encodingOf('gpt-4.1-mini') // → 'o200k_base'
 */
export function encodingOf(model: string): Encoding | undefined {
  // A fine-tuned model is named after its base: ft:gpt-4o-mini-2024-07-18:org::id.
  const name = model.toLowerCase().replace(/^ft:/, '')
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4)(\b|-|$)/.test(name)) return 'o200k_base'
  if (/^(gpt-4|gpt-3\.5)(\b|-|$)/.test(name)) return 'cl100k_base'
  return undefined
}

/** The tokenizer counter of `encoding`, loading just that encoding. */
export async function tokenizer(encoding: Encoding): Promise<TokenCounter> {
  const { countTokens } =
    encoding === 'o200k_base' ? await import('gpt-tokenizer/encoding/o200k_base') : await import('gpt-tokenizer/encoding/cl100k_base')
  // Special-token text in a message (`<|endoftext|>` in a tool result) is counted as the text it is:
  // the API reads it so, and the library would otherwise throw.
  const options = { disallowedSpecial: new Set<string>() }
  return Object.freeze({ name: encoding, count: (text: string) => countTokens(text, options) })
}

/** The encoding the config chooses for `model`, or undefined for the calibrated estimate. */
export function chosenEncoding(choice: TokenizerChoice, model: string): Encoding | undefined {
  if (choice === 'estimate') return undefined
  return choice === 'auto' ? encodingOf(model) : choice
}
