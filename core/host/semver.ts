/**
 * @module host/semver
 * The four semver functions the host uses, each loaded from its own module: `semver`'s index loads all
 * of its ~50 modules at every command's start (0.03 CPU-s of a `cordage run`, measured on 2026-12-07).
 */
import rcompare from 'semver/functions/rcompare.js'
import satisfies from 'semver/functions/satisfies.js'
import valid from 'semver/functions/valid.js'
import validRange from 'semver/ranges/valid.js'

export const semver = { rcompare, satisfies, valid, validRange }
