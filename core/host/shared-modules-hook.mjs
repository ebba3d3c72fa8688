// A Node module resolve hook (runs in Node's loader thread, so plain JavaScript). Packages whose identity
// matters to plugins (cordage itself, cordis, zod, schemastery) are resolved as if the host imported
// them: a plugin folder anywhere on disk gets the host's copies, never a second cordis or zod.
let hostURL
let shared = new Set()

export function initialize(data) {
  hostURL = data.hostURL
  shared = new Set(data.packages)
}

export async function resolve(specifier, context, next) {
  if (hostURL && shared.has(packageName(specifier))) return next(specifier, { ...context, parentURL: hostURL })
  return next(specifier, context)
}

function packageName(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.includes(':')) return ''
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}
