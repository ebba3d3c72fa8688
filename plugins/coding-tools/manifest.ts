import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface TestCommand {
  run: string[] | string
  shell: boolean
  timeoutMs: number
  env: Record<string, string>
  inheritEnv: boolean
}

export interface Config {
  test: TestCommand
  maxReadChars: number
  maxListEntries: number
  maxSearchMatches: number
  maxSearchFileBytes: number
  maxWriteChars: number
  tailChars: number
  ignore: string[]
}

export default {
  name: 'coding-tools',
  version: '1.3.0',
  description: "Read, list, search and edit the files of the run's workspace, and run its tests.",
  requires: { tools: '^1.0.0', workspace: '^1.0.0' },
  config: Schema.object({
    test: Schema.object({
      run: Schema.union([Schema.array(String), String])
        .default(['node', '--test'])
        .description('The test command: an argument list, or a shell script (a string) with shell: true.'),
      shell: Schema.boolean().default(false).description('Run `run` (a string) through /bin/sh.'),
      timeoutMs: Schema.natural().min(1).default(60_000).description('Stop the tests (their whole process group) after this long.'),
      env: Schema.dict(String).default({}).description("Variables added to the test command's environment."),
      inheritEnv: Schema.boolean()
        .default(false)
        .description('Pass the whole environment of the harness (by default only PATH, HOME, TMPDIR, locale and the like).'),
    })
      .default({ run: ['node', '--test'], shell: false, timeoutMs: 60_000, env: {}, inheritEnv: false })
      .description("How run_tests runs the workspace's tests."),
    maxReadChars: Schema.natural().min(1).default(64_000).description('read_file returns at most this many characters.'),
    maxListEntries: Schema.natural().min(1).default(500).description('list_files returns at most this many paths.'),
    maxSearchMatches: Schema.natural().min(1).default(100).description('search returns at most this many matching lines.'),
    maxSearchFileBytes: Schema.natural().min(1).default(1_000_000).description('search skips files larger than this.'),
    maxWriteChars: Schema.natural().min(1).default(1_000_000).description('edit_file refuses a file that would be larger than this.'),
    tailChars: Schema.natural().min(1).default(4000).description('Characters of the end of the test output that run_tests shows.'),
    ignore: Schema.array(String)
      .default(['.git', 'node_modules'])
      .description('Folder and file names that list_files and search skip, at any depth.'),
  }),
} satisfies Manifest
