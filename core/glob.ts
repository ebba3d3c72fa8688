/**
 * @module glob
 * Name patterns as used in presets (`crm_*`, `/tmp/*`): `*` matches any run of characters, everything
 * else matches itself. Shared by plugins that match tool names and argument values.
 */
export function globPattern(glob: string): RegExp {
  return new RegExp('^' + glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$')
}
