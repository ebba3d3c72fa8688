/**
 * @module host/expected
 * Turn a zod issue into the "expected …" half of a message, in the same words for presets and manifests.
 */
import type { z } from 'zod'

export function expected(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected
    case 'too_small':
      return `${issue.origin === 'number' ? 'a number' : issue.origin} ${issue.inclusive ? '≥' : '>'} ${issue.minimum}`
    case 'too_big':
      return `${issue.origin === 'number' ? 'a number' : issue.origin} ${issue.inclusive ? '≤' : '<'} ${issue.maximum}`
    default:
      return issue.message.replace(/^Invalid input: (expected )?/, '')
  }
}
