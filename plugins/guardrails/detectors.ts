/**
 * @module guardrails/detectors
 * The built-in detectors: what each one looks for, and the checks that keep look-alikes out (a Luhn
 * check and card brand prefixes for card numbers, ISO 13616 mod-97 for IBANs, a mix of letters and
 * digits for `sk-` keys). A detector only finds spans; what happens to them is the guard's business.
 */

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

interface Rule {
  label: string
  pattern: RegExp
  /** A second look at a match, for look-alikes a regular expression cannot rule out. */
  accept?: (match: string) => boolean
}

/** Every match of every rule, in text order. Patterns must carry the `g` flag. */
function findAll(text: string, rules: readonly Rule[]): Span[] {
  const spans: Span[] = []
  for (const rule of rules) {
    rule.pattern.lastIndex = 0
    for (const m of text.matchAll(rule.pattern)) {
      if (m[0].length === 0 || (rule.accept && !rule.accept(m[0]))) continue
      spans.push({ start: m.index!, end: m.index! + m[0].length, label: rule.label })
    }
  }
  return spans.sort((a, b) => a.start - b.start || b.end - a.end)
}

/** Keys are random: a body of letters only ("sk-learn-documentation") is a word, not a key. */
const mixed = (body: string) => /\d/.test(body) && /[A-Za-z]/.test(body)

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
  { label: 'bearer token', pattern: /(?<=\b[Bb]earer[ \t]{1,4})[A-Za-z0-9\-._~+/]{16,}=*/g, accept: (m) => /\d/.test(m) || /[A-Z].*[a-z]|[a-z].*[A-Z]/.test(m) },
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
  if (n >= 16 && n <= 19 && (p(4) === 6011 || p(2) === 65 || (p(3) >= 644 && p(3) <= 649) || (p(6) >= 622126 && p(6) <= 622925))) return 'discover'
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
const CardCandidate = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![ -]?\d)/g
// File names such as icon@2x.png have the shape of an address.
const FileExtensions = /^(?:png|jpe?g|gif|svg|webp|ico|bmp|tiff?)$/i
const EmailPattern = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g

/** In order of precedence: where two detectors find overlapping text, the one listed first keeps it. */
export const Builtins = {
  secrets: { name: 'secrets', kind: 'secret', find: (text) => findAll(text, SecretRules) },
  iban: {
    name: 'iban', kind: 'iban',
    find: (text) => findAll(text, [{ label: 'iban', pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g, accept: isIban }]),
  },
  card: {
    name: 'card', kind: 'card',
    find: (text) => findAll(text, [{ label: 'card number', pattern: CardCandidate, accept: isCardNumber }]),
  },
  email: {
    name: 'email', kind: 'email',
    find: (text) => findAll(text, [{ label: 'email address', pattern: EmailPattern, accept: (m) => !FileExtensions.test(m.slice(m.lastIndexOf('.') + 1)) }]),
  },
  /**
   * Conservative on purpose: only numbers written as phone numbers. International form (`+` and a
   * country code, 8 to 15 digits in all, as E.164 allows) or the North American `(555) 010-0199` /
   * `555-010-0199`. A bare run of digits is never a phone number here: it is more often an order id.
   */
  phone: {
    name: 'phone', kind: 'phone',
    find: (text) => findAll(text, [
      { label: 'phone number', pattern: /(?<![\w+])\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?![\w])/g, accept: (m) => { const n = m.replace(/\D/g, '').length; return n >= 8 && n <= 15 } },
      { label: 'phone number', pattern: /(?<![\w+(-])(?:\(\d{3}\) ?|\d{3}[-.])\d{3}[-.]\d{4}(?![\w-])/g },
    ]),
  },
} satisfies Record<string, Detector>

export type BuiltinName = keyof typeof Builtins

export const BuiltinNames = Object.keys(Builtins) as BuiltinName[]

/** A detector from a custom pattern of the config (compiled and checked by the caller). */
export function patternDetector(name: string, pattern: RegExp): Detector {
  return { name, kind: name, find: (text) => findAll(text, [{ label: name, pattern }]) }
}
