import { Schema } from 'cordis'
import type { Manifest, SideEffect } from 'cordage'

/** What the preset may say about one tool (or, under `defaults`, about every tool of a server). */
export interface ContractOverride {
  sideEffect?: SideEffect
  idempotent?: boolean
  needsApproval?: boolean
  timeoutMs?: number
  retries?: number
}

export interface ToolOverride extends ContractOverride {
  rename?: string
}

export interface ServerConfig {
  name: string
  transport: 'stdio' | 'http'
  command?: string
  args: string[]
  env: Record<string, string>
  cwd?: string
  url?: string
  headers: Record<string, string>
  connectTimeoutMs: number
  include: string[]
  exclude: string[]
  defaults: ContractOverride
  tools: Record<string, ToolOverride>
}

export interface Config {
  servers: ServerConfig[]
  reconnect: { attempts: number; initialDelayMs: number; maxDelayMs: number }
  log: boolean
}

const sideEffect = Schema.union(['none', 'local', 'external'])

const contract = {
  sideEffect: sideEffect.description('What a call may change outside the run: none, local or external. Default: external.'),
  idempotent: Schema.boolean().description(
    'Calling twice with the same idempotency key has the effect of calling once (the server deduplicates on `_meta["cordage/idempotencyKey"]`). Default: true for sideEffect none, otherwise false.',
  ),
  needsApproval: Schema.boolean().description(
    'A hint policy rules can match (`match: { needsApproval: true }`). Default: true unless sideEffect is none.',
  ),
  timeoutMs: Schema.natural().min(1).description('The kernel aborts the call after this long. Default: 30000.'),
  retries: Schema.natural().description(
    'Extra attempts after a transient failure; used only for tools without side effects or idempotent ones. Default: 0.',
  ),
}

const server = Schema.object({
  name: Schema.string()
    .pattern(/^[a-zA-Z][a-zA-Z0-9_-]{0,31}$/)
    .required()
    .description(
      "The namespace: this server's tools are registered as `<name>__<tool>`. Letters, digits, `_` and `-`, starting with a letter, at most 32 characters; unique among the servers.",
    ),
  transport: Schema.union(['stdio', 'http'])
    .default('stdio')
    .description('`stdio`: start `command` and speak MCP over its stdin/stdout. `http`: connect to `url` (streamable HTTP).'),
  command: Schema.string().description(
    "stdio: the program to start. A path with a `/` is relative to the preset's folder; a bare name is looked up on PATH.",
  ),
  args: Schema.array(String)
    .default([])
    .description("stdio: its arguments. `${VAR}` is replaced by the variable from Cordage's environment (a secret)."),
  env: Schema.dict(String)
    .default({})
    .description(
      "stdio: environment variables for the server, on top of HOME, PATH, SHELL, TERM, USER and LOGNAME (nothing else is inherited). `${VAR}` in a value is read from Cordage's environment and kept secret.",
    ),
  cwd: Schema.string().description("stdio: its working directory, relative to the preset's folder. Default: the preset's folder."),
  url: Schema.string().description("http: the server's MCP endpoint, e.g. `http://127.0.0.1:8931/mcp`. `${VAR}` allowed (a secret)."),
  headers: Schema.dict(String)
    .default({})
    .description(
      "http: headers sent with every request, e.g. `Authorization: Bearer ${ORDERS_TOKEN}`. `${VAR}` is read from Cordage's environment and kept secret.",
    ),
  connectTimeoutMs: Schema.natural()
    .min(1)
    .default(10_000)
    .description('How long starting (or reaching) the server and its MCP handshake may take.'),
  include: Schema.array(String)
    .default(['*'])
    .description("Names (as the server spells them; `*` matches any run of characters) of the server's tools to register."),
  exclude: Schema.array(String).default([]).description("Names of the server's tools never to register, even if included."),
  // Every field is optional (contract.ts fills the gaps); schemastery's types assume required fields.
  defaults: Schema.object(contract)
    .default({} as never)
    .description('The execution contract of every tool of this server, unless `tools` says otherwise.'),
  tools: Schema.dict(
    Schema.object({
      ...contract,
      rename: Schema.string()
        .pattern(/^[a-zA-Z0-9_-]+$/)
        .description(
          'Register the tool as `<server>__<rename>` instead of its own (sanitised) name: for names that are too long or collide.',
        ),
    }),
  )
    .default({})
    .description("Per tool (by the server's name for it): its contract, and `rename`. Naming a tool the server does not have is an error."),
})

export default {
  name: 'mcp-tools',
  version: '1.0.0',
  description:
    'Tools of MCP servers (stdio or streamable HTTP), registered under a namespace with contracts from the preset; reconnects when a server restarts.',
  requires: { tools: '^1.0.0' },
  config: Schema.object({
    servers: Schema.array(server).default([]).description('The MCP servers whose tools this agent gets.'),
    reconnect: Schema.object({
      attempts: Schema.natural()
        .default(5)
        .description('Background attempts after a server is lost, before waiting for the next call to try again.'),
      initialDelayMs: Schema.natural().default(200).description('Wait before the first background attempt; doubled after each failure.'),
      maxDelayMs: Schema.natural().default(5000).description('The longest wait between two attempts.'),
    })
      .default({ attempts: 5, initialDelayMs: 200, maxDelayMs: 5000 })
      .description('Reconnecting to a server that went away (exited, restarted, network).'),
    log: Schema.boolean()
      .default(true)
      .description(
        "Log problems (connection lost, a failed reconnect, a tool skipped) at warn and changes (reconnected, tools added or removed) at info, through the host's plugin logger (docs/guides/logging.md), secrets removed.",
      ),
  }),
} satisfies Manifest
