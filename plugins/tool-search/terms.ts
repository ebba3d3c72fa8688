/**
 * @module tool-search/terms
 * How tool names, descriptions, tags and queries become search terms. Tool names are identifiers
 * (`github__create_pull_request`, `listPods`), so they are split on `_`, `-` and case changes before
 * anything else; every word is then lower-cased, stop words are dropped and a light suffix stemmer
 * folds `created`, `creates` and `creating` onto one term. Index and query go through the same steps,
 * so a term can only match what was produced the same way.
 */

/** Separates a tool's namespace from its name, as mcp-tools names tools: `<server>__<tool>`. */
export const NamespaceSeparator = '__'

/** The namespace of a tool name (`github` for `github__create_issue`), or '' when it has none. */
export function namespaceOf(name: string): string {
  const at = name.indexOf(NamespaceSeparator)
  return at > 0 ? name.slice(0, at) : ''
}

/** The name without its namespace (`create_issue` for `github__create_issue`). */
export function localName(name: string): string {
  const at = name.indexOf(NamespaceSeparator)
  return at > 0 ? name.slice(at + NamespaceSeparator.length) : name
}

/**
 * Words of a text or identifier, lower-cased: `listPods` → list, pods; `k8s__get_pod-logs` → k8s, get,
 * pod, logs. Digits stay inside their word (`k8s`, `ec2`, `s3`), because they are names, not numbers.
 */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0)
}

/**
 * Words that say nothing about which tool is meant. Kept short on purpose: "all", "new", "my" and
 * "open" stay out of this list only when they can carry meaning ("new" and "open" do: create).
 */
const StopWords = new Set([
  'a',
  'an',
  'the',
  'to',
  'of',
  'for',
  'in',
  'on',
  'at',
  'by',
  'from',
  'into',
  'onto',
  'with',
  'about',
  'as',
  'and',
  'or',
  'but',
  'is',
  'are',
  'be',
  'was',
  'were',
  'been',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'i',
  'me',
  'my',
  'we',
  'us',
  'our',
  'you',
  'your',
  'they',
  'them',
  'their',
  'he',
  'she',
  'his',
  'her',
  'please',
  'can',
  'could',
  'would',
  'should',
  'will',
  'shall',
  'may',
  'might',
  'must',
  'do',
  'does',
  'did',
  'want',
  'wants',
  'need',
  'needs',
  'like',
  'let',
  'lets',
  'some',
  'any',
  'so',
  'just',
  'also',
  'there',
  'what',
  'which',
  'who',
  'whom',
  'how',
  'when',
  'where',
  'why',
  'if',
  'then',
  'than',
  'up',
  'out',
  'via',
  'using',
  'use',
  'tool',
  'tools',
  'given',
  'specific',
  'one',
  'right',
  'now',
  'currently',
  'whether',
])

export function isStopWord(word: string): boolean {
  return StopWords.has(word)
}

/**
 * A light suffix stemmer: plural and verb endings, then a final `e`, so that `merge`, `merges`,
 * `merged` and `merging` all give `merg`. Words of three letters or fewer, and words with digits, are
 * left alone (`s3`, `ec2`, `api`). It conflates less than Porter's stemmer, which is the point: tool
 * vocabularies are full of short technical words that an aggressive stemmer would merge.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word
  let s = word
  if (s.endsWith('ies') && s.length > 4) s = s.slice(0, -3) + 'y'
  else if (s.endsWith('sses')) s = s.slice(0, -2)
  else if (/(ch|sh|x|zz)es$/.test(s)) s = s.slice(0, -2)
  else if (s.endsWith('s') && !/(ss|us|is|as)$/.test(s)) s = s.slice(0, -1)
  if (s.endsWith('ing') && s.length > 5) s = undouble(s.slice(0, -3))
  else if (s.endsWith('ed') && s.length > 4 && !s.endsWith('eed')) s = undouble(s.slice(0, -2))
  if (s.endsWith('e') && s.length > 3 && !s.endsWith('ee')) s = s.slice(0, -1)
  return s
}

/** `runn` → `run`, `mapp` → `map`; but `bill`, `pass` and `buzz` keep their double letter. */
function undouble(s: string): string {
  return /([bcdfgkmnprt])\1$/.test(s) ? s.slice(0, -1) : s
}

/** One word as an index term: undefined when it is a stop word. */
export function term(word: string): string | undefined {
  return isStopWord(word) ? undefined : stem(word)
}

/** The terms of a text, in order, duplicates kept (term frequency matters to BM25). */
export function terms(text: string): string[] {
  const out: string[] = []
  for (const w of words(text)) {
    const t = term(w)
    if (t) out.push(t)
  }
  return out
}
