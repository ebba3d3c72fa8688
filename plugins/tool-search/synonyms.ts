/**
 * @module tool-search/synonyms
 * A small, general vocabulary of words people use for the same software action or object ("remove" for
 * delete, "repo" for repository). Written for tool catalogues in general, not for one evaluation set:
 * bench/tool-search reports recall with and without it, so what it adds is measured, not assumed.
 *
 * Each group lists words that can stand for each other; an entry of `abbreviations` expands one word
 * into a phrase (`pr` → pull request), one way only. Expanded terms
 * count less than the words the query really used (see search-index.ts).
 */
import { stem, words } from './terms.ts'

const Groups: string[][] = [
  ['create', 'add', 'new', 'make', 'open', 'start'],
  ['delete', 'remove', 'drop', 'destroy', 'erase', 'purge', 'discard'],
  ['list', 'enumerate', 'browse', 'show', 'all'],
  ['get', 'fetch', 'retrieve', 'read', 'view', 'show', 'lookup', 'describe', 'inspect', 'detail'],
  ['update', 'edit', 'modify', 'change', 'patch', 'set', 'alter'],
  ['search', 'find', 'query', 'lookup', 'locate', 'filter'],
  ['send', 'post', 'notify', 'message', 'deliver'],
  ['run', 'execute', 'trigger', 'launch', 'invoke', 'start', 'kick'],
  ['stop', 'halt', 'cancel', 'terminate', 'kill', 'abort', 'shutdown'],
  ['restart', 'reboot', 'bounce', 'recycle'],
  ['deploy', 'release', 'ship', 'rollout', 'publish'],
  ['close', 'resolve', 'finish', 'complete', 'done'],
  ['copy', 'duplicate', 'clone'],
  ['move', 'transfer', 'relocate'],
  ['upload', 'put', 'store', 'save'],
  ['download', 'export', 'save'],
  ['approve', 'accept', 'sign'],
  ['reject', 'decline', 'deny'],
  ['assign', 'allocate', 'delegate'],
  ['invite', 'onboard'],
  ['subscribe', 'follow', 'watch'],
  ['user', 'member', 'account', 'person', 'people', 'employee', 'teammate'],
  ['customer', 'client', 'buyer', 'shopper'],
  ['issue', 'ticket', 'bug', 'task', 'story'],
  ['message', 'msg', 'chat', 'post'],
  ['channel', 'room', 'conversation'],
  ['file', 'document', 'doc'],
  ['directory', 'folder', 'dir'],
  ['database', 'db'],
  ['table', 'relation'],
  ['record', 'row', 'entry', 'item'],
  ['payment', 'charge', 'pay', 'transaction'],
  ['refund', 'reimburse', 'chargeback'],
  ['invoice', 'bill'],
  ['price', 'cost', 'spend', 'amount', 'fee'],
  ['email', 'mail', 'inbox'],
  ['event', 'meeting', 'appointment'],
  ['comment', 'reply', 'note', 'remark', 'feedback'],
  ['log', 'trace', 'output'],
  ['metric', 'stat', 'statistic', 'measure', 'usage'],
  ['alert', 'alarm', 'page', 'incident'],
  ['error', 'exception', 'crash', 'failure'],
  ['secret', 'credential', 'password', 'token', 'key'],
  ['permission', 'access', 'role', 'grant', 'privilege'],
  ['config', 'configuration', 'setting', 'option', 'preference'],
  ['environment', 'env', 'stage'],
  ['instance', 'server', 'machine', 'host', 'node', 'vm'],
  ['container', 'pod'],
  ['k8s', 'kubernetes', 'kube'],
  ['postgres', 'postgresql', 'psql'],
  ['schedule', 'cron', 'calendar'],
  ['contact', 'lead', 'prospect'],
  ['product', 'item', 'sku'],
  ['order', 'purchase'],
  ['size', 'disk', 'storage', 'space'],
  ['count', 'number', 'total', 'many'],
  ['recent', 'latest', 'last', 'newest'],
]

const Abbreviations: Record<string, string> = {
  pr: 'pull request',
  mr: 'merge request',
  repo: 'repository',
  dm: 'direct message',
  ci: 'continuous integration',
  vm: 'virtual machine',
  sms: 'text message',
  acl: 'access control',
  sql: 'query',
}

export type SynonymTable = ReadonlyMap<string, readonly string[]>

/** The built-in table, keyed by stemmed term; each value holds the stemmed terms it may stand for. */
export const BuiltinSynonyms: SynonymTable = build(Groups, Abbreviations)

export function build(groups: string[][], abbreviations: Record<string, string>): SynonymTable {
  const table = new Map<string, Set<string>>()
  const link = (from: string, to: string) => {
    if (from === to) return
    let set = table.get(from)
    if (!set) table.set(from, (set = new Set()))
    set.add(to)
  }
  for (const group of groups) {
    const stems = group.map(stem)
    for (const a of stems) for (const b of stems) link(a, b)
  }
  // One way only: "pr" means pull request, but "request" alone does not mean "pr".
  for (const [short, phrase] of Object.entries(abbreviations)) {
    for (const t of words(phrase).map(stem)) link(short, t)
  }
  return new Map([...table].map(([k, v]) => [k, [...v]]))
}
