/**
 * @module guardrails/detectors
 * The built-in detectors: what each one looks for, and the checks that keep look-alikes out (a Luhn
 * check and card brand prefixes for card numbers, ISO 13616 mod-97 for IBANs, a mix of letters and
 * digits for `sk-` keys). A detector only finds spans; what happens to them is the guard's business.
 *
 * Running time. Detectors scan every tool result and answer, text the model and the tools control, on
 * V8's backtracking engine: they need lookbehind, which the linear-time engine (safeRegex) lacks, and
 * they run about 45 times faster there (1 MB through all five: ~50 ms on V8, ~2.2 s on re2js). So each
 * pattern below is written not to backtrack: no quantified group whose iterations can split the same
 * text two ways, and every alternative or repetition decided by the next character, or bounded by a
 * small constant. The comment above each pattern says why it is linear in the text; a new pattern
 * needs the same argument (the guardrails tests run each detector on long crafted inputs).
 * Custom patterns from the config do not get this review: they run on safeRegex (see guard.ts).
 */
import type { SafeRegex } from 'cordage'

/** One thing found: where it is and what kind of thing it is. Never the text itself, outside this module's callers. */
export interface Span {
  start: number
  end: number
  /** A finer name for reasons, e.g. `github token`; safe to show (it is not the match). */
  label: string
}

export interface Detector {
  /** The detector's name in the config and in `guard/tripped`. */
  name: string
  /** What a match is replaced with by default: `[redacted:<kind>]`. */
  kind: string
  find(text: string): Span[]
}

/** Matches left to right, as String.prototype.matchAll gives them. */
interface Matcher {
  matchAll(text: string): Iterable<{ index?: number; 0: string }>
}

interface Rule {
  label: string
  /** A V8 RegExp with the `g` flag (built-ins, reviewed), or a linear-time one (custom patterns). */
  pattern: RegExp | Matcher
  /** A second look at a match, for look-alikes a regular expression cannot rule out. Must be linear too. */
  accept?: (match: string) => boolean
}

/** Every match of every rule, in text order. */
function findAll(text: string, rules: readonly Rule[]): Span[] {
  const spans: Span[] = []
  for (const rule of rules) {
    const { pattern } = rule
    if (pattern instanceof RegExp) pattern.lastIndex = 0
    for (const m of pattern instanceof RegExp ? text.matchAll(pattern) : pattern.matchAll(text)) {
      if (m[0].length === 0 || (rule.accept && !rule.accept(m[0]))) continue
      spans.push({ start: m.index!, end: m.index! + m[0].length, label: rule.label })
    }
  }
  return spans.sort((a, b) => a.start - b.start || b.end - a.end)
}

/** Keys are random: a body of letters only ("sk-learn-documentation") is a word, not a key. */
const mixed = (body: string) => /\d/.test(body) && /[A-Za-z]/.test(body)

// Why each is linear. The lookbehinds look at one character, or (bearer) at most ten behind the start.
// private key: a literal start; the words of the label each end in a space their class excludes, so
//   they split one way; the lazy scan stops at the first "-----END " followed by the label, compared
//   over label characters only, so each character is compared O(1) times; failing that, the rest of
//   the text is the match. A match consumes what it scanned.
// sk-, stripe, slack: a literal start, then one class repeated to its end; nothing after it can fail.
// aws, google: fixed lengths. github: at most 255 characters, backtracked once, per "gh?_" start.
// jwt: three runs of a class that excludes the "." between them: each run ends one way.
// bearer: one class, then "=" which it excludes. Its accept is two scans: the token has no line
//   breaks, so "an upper- and a lower-case letter in either order" is "one of each" (the pattern
//   /[A-Z].*[a-z]|[a-z].*[A-Z]/ said the same in quadratic time: 1.4 s for a 40,000-letter token).
const SecretRules: readonly Rule[] = [
  { label: 'private key', pattern: /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----(?:[\s\S]*?-----END \1-----|[\s\S]*$)/g },
  { label: 'sk- api key', pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g, accept: (m) => mixed(m.slice(3)) },
  { label: 'stripe key', pattern: /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { label: 'aws access key id', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/g },
  { label: 'github token', pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g },
  { label: 'slack token', pattern: /(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}/g },
  { label: 'google api key', pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  { label: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  // Only the credential: "Bearer " stays, so the reader still sees what was there.
  {
    label: 'bearer token',
    pattern: /(?<=\b[Bb]earer[ \t]{1,4})[A-Za-z0-9\-._~+/]{16,}=*/g,
    accept: (m) => /\d/.test(m) || (/[A-Z]/.test(m) && /[a-z]/.test(m)),
  },
]

/** The Luhn checksum (ISO/IEC 7812): true when the digits end in a valid check digit. */
export function luhn(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return digits.length > 0 && sum % 10 === 0
}

/**
 * The card brand a number belongs to by its prefix and length, or undefined. Only brands with
 * published ranges: Visa, Mastercard, American Express, Discover, JCB, Diners Club, UnionPay.
 */
export function cardBrand(digits: string): string | undefined {
  const n = digits.length
  const p = (k: number) => Number(digits.slice(0, k))
  if (digits[0] === '4' && (n === 13 || n === 16 || n === 19)) return 'visa'
  if (n === 16 && ((p(2) >= 51 && p(2) <= 55) || (p(4) >= 2221 && p(4) <= 2720))) return 'mastercard'
  if (n === 15 && (p(2) === 34 || p(2) === 37)) return 'amex'
  if (n >= 16 && n <= 19 && (p(4) === 6011 || p(2) === 65 || (p(3) >= 644 && p(3) <= 649) || (p(6) >= 622126 && p(6) <= 622925)))
    return 'discover'
  if (n >= 16 && n <= 19 && p(4) >= 3528 && p(4) <= 3589) return 'jcb'
  if (n >= 14 && n <= 19 && ((p(3) >= 300 && p(3) <= 305) || p(2) === 36 || p(2) === 38 || p(2) === 39)) return 'diners'
  if (n >= 16 && n <= 19 && p(2) === 62) return 'unionpay'
  return undefined
}

/** A card number: a brand's prefix and length, and a valid Luhn check digit. */
export function isCardNumber(candidate: string): boolean {
  const digits = candidate.replace(/[ -]/g, '')
  return /^\d{13,19}$/.test(digits) && cardBrand(digits) !== undefined && luhn(digits)
}

/** An IBAN: country code, check digits, and the ISO 13616 mod-97 check equal to 1. */
export function isIban(candidate: string): boolean {
  const iban = candidate.replace(/ /g, '')
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let remainder = 0
  for (const ch of rearranged) {
    const value = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch
    for (const d of value) remainder = (remainder * 10 + Number(d)) % 97
  }
  return remainder === 1
}

// Digit runs with single spaces or dashes between digits, not inside a longer run of digits.
// Linear: each repetition is one digit, its optional separator decided by the next character; at most
// 19 digits per start, and a start needs a non-digit before it.
const CardCandidate = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![ -]?\d)/g
// File names such as icon@2x.png have the shape of an address.
const FileExtensions = /^(?:png|jpe?g|gif|svg|webp|ico|bmp|tiff?)$/i
// Linear: a start needs a character outside the local part before it, so each "@" has one start, at
// most 64 characters before it. A domain label can end at most 63 ways, and only the one followed by
// "." or the end of the label's run goes on, so each label is backtracked once; each domain is read
// by the one start before its "@".
const EmailPattern =
  /(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g

/**
 * The international form: `+`, a country code and two to six groups of one to four digits, each with
 * an optional separator and parentheses, and no word character after it. It was one V8 pattern,
 * `/(?<![\w+])\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?![\w])/g`, which splits a run of digits into
 * groups in thousands of ways and tries each when the number is followed by a letter or a digit (~150 µs
 * per "+", about 10 s for a crafted megabyte). Here V8 finds the starts, and {@link phoneEnd} walks the
 * same choices in the same order (so the spans are the pattern's), remembering the states that failed:
 * at most 47 positions × 7 group counts per start (the longest number is 46 characters).
 */
const InternationalPhone: Matcher = {
  *matchAll(text) {
    let end = 0
    for (const start of text.matchAll(PhoneStart)) {
      const at = start.index!
      if (at < end) continue
      const stop = phoneEnd(text, at)
      if (stop < 0) continue
      end = stop
      yield { index: at, 0: text.slice(at, stop) }
    }
  },
}
/** A "+" and a digit from 1 to 9, with no word character or "+" before it. */
const PhoneStart = /(?<![\w+])\+[1-9]/g

const code = (text: string, i: number) => (i < text.length ? text.charCodeAt(i) : -1)
const isDigit = (c: number) => c >= 48 && c <= 57
// \w without the u flag: ASCII letters, digits and _.
const isWord = (c: number) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
const isSeparator = (c: number) => c === 32 || c === 46 || c === 45

/**
 * The states (position after the start × 8 + groups so far) that failed for the start being read: a
 * state is marked with the number of that start. Shared: detectors run synchronously, one at a time.
 */
const phoneFailed = new Uint32Array(64 * 8)
let phoneStart = 0
let phoneText = ''
let phoneAt = 0

/**
 * Where the number that starts at `at` (a "+" and a digit) ends, or -1: the end the pattern above
 * finds, taking each choice greedily and backtracking in its order, but trying each (position, groups
 * so far) state at most once: a state that failed fails again, whatever led to it.
 */
function phoneEnd(text: string, at: number): number {
  if (++phoneStart === 0xffffffff) {
    phoneFailed.fill(0)
    phoneStart = 1
  }
  phoneText = text
  phoneAt = at
  try {
    // "+" and [1-9], then \d{0,2}, longest first.
    let extra = 0
    while (extra < 2 && isDigit(code(text, at + 2 + extra))) extra++
    for (let d = extra; d >= 0; d--) {
      const end = phoneGroups(at + 2 + d, 0)
      if (end >= 0) return end
    }
    return -1
  } finally {
    phoneText = ''
  }
}

/** After `k` groups, at `pos`: one more group (greedy), else stop here if there are two and no word character follows. */
function phoneGroups(pos: number, k: number): number {
  const key = (pos - phoneAt) * 8 + k
  if (phoneFailed[key] === phoneStart) return -1
  const end = k < 6 ? phoneGroup(pos, k) : -1
  if (end >= 0) return end
  if (k >= 2 && !isWord(code(phoneText, pos))) return pos
  phoneFailed[key] = phoneStart
  return -1
}

/** One group, [ .-]? \(? \d{1,4} \)?: each optional part taken first, then left out; digits longest first. */
function phoneGroup(pos: number, k: number): number {
  const text = phoneText
  for (let sep = isSeparator(code(text, pos)) ? 1 : 0; sep >= 0; sep--) {
    const p1 = pos + sep
    for (let paren = code(text, p1) === 40 ? 1 : 0; paren >= 0; paren--) {
      const p2 = p1 + paren
      let digits = 0
      while (digits < 4 && isDigit(code(text, p2 + digits))) digits++
      for (let d = digits; d >= 1; d--) {
        const p3 = p2 + d
        for (let close = code(text, p3) === 41 ? 1 : 0; close >= 0; close--) {
          const end = phoneGroups(p3 + close, k + 1)
          if (end >= 0) return end
        }
      }
    }
  }
  return -1
}

/** In order of precedence: where two detectors find overlapping text, the one listed first keeps it. */
export const Builtins = {
  secrets: { name: 'secrets', kind: 'secret', find: (text) => findAll(text, SecretRules) },
  iban: {
    name: 'iban',
    kind: 'iban',
    // Linear: groups of exactly four, at most seven of them and a tail of one to three: a few dozen
    // ways to end, per start, and a start needs a non-alphanumeric character before it.
    find: (text) =>
      findAll(text, [
        {
          label: 'iban',
          pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g,
          accept: isIban,
        },
      ]),
  },
  card: {
    name: 'card',
    kind: 'card',
    find: (text) => findAll(text, [{ label: 'card number', pattern: CardCandidate, accept: isCardNumber }]),
  },
  email: {
    name: 'email',
    kind: 'email',
    find: (text) =>
      findAll(text, [
        { label: 'email address', pattern: EmailPattern, accept: (m) => !FileExtensions.test(m.slice(m.lastIndexOf('.') + 1)) },
      ]),
  },
  /**
   * Conservative on purpose: only numbers written as phone numbers. International form (`+` and a
   * country code, 8 to 15 digits in all, as E.164 allows) or the North American `(555) 010-0199` /
   * `555-010-0199`. A bare run of digits is never a phone number here: it is more often an order id.
   */
  phone: {
    name: 'phone',
    kind: 'phone',
    find: (text) =>
      findAll(text, [
        {
          label: 'phone number',
          pattern: InternationalPhone,
          accept: (m) => {
            const n = m.replace(/\D/g, '').length
            return n >= 8 && n <= 15
          },
        },
        // Fixed lengths: linear.
        { label: 'phone number', pattern: /(?<![\w+(-])(?:\(\d{3}\) ?|\d{3}[-.])\d{3}[-.]\d{4}(?![\w-])/g },
      ]),
  },
} satisfies Record<string, Detector>

export type BuiltinName = keyof typeof Builtins

export const BuiltinNames = Object.keys(Builtins) as BuiltinName[]

/** A detector from a custom pattern of the config (compiled and checked by the caller). */
export function patternDetector(name: string, pattern: SafeRegex): Detector {
  return { name, kind: name, find: (text) => findAll(text, [{ label: name, pattern }]) }
}
