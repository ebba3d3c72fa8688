/** Tools that act on the machine the agent runs on: files, git, a shell, Docker, a browser, the web. */
import { bool, int, list, obj, oneOf, str, type NamespaceSpec } from './spec.ts'

const path = { 'path!': str('Path, relative to the workspace root.') }
export const fs: NamespaceSpec = {
  ns: 'fs',
  product: 'the file system',
  tags: ['files', 'local'],
  writes: 'local',
  resources: [],
  tools: [
    {
      name: 'read_file',
      description: 'Read a text file and return its contents, optionally a range of lines.',
      params: { ...path, start_line: int('First line (1-based).'), end_line: int('Last line.') },
      sideEffect: 'none',
    },
    {
      name: 'read_multiple_files',
      description: 'Read several files at once; each result says which path it came from.',
      params: { 'paths!': list('Paths to read.') },
      sideEffect: 'none',
    },
    {
      name: 'write_file',
      description: 'Write a file, creating it or replacing everything in it.',
      params: { ...path, 'content!': str('New content.') },
    },
    {
      name: 'edit_file',
      description: 'Replace an exact piece of text in a file with new text, leaving the rest untouched.',
      params: { ...path, 'old_text!': str('Text to replace; must occur once.'), 'new_text!': str('Replacement.') },
    },
    { name: 'append_file', description: 'Append text to the end of a file.', params: { ...path, 'content!': str('Text to append.') } },
    {
      name: 'list_directory',
      description: 'List the files and subdirectories in a directory.',
      params: { ...path, recursive: bool('Include subdirectories.') },
      sideEffect: 'none',
    },
    {
      name: 'directory_tree',
      description: 'Show a directory as an indented tree, to get an overview of a project.',
      params: { ...path, depth: int('How deep to go.') },
      sideEffect: 'none',
    },
    { name: 'create_directory', description: 'Create a directory, and its parents when missing.', params: path },
    {
      name: 'move_file',
      description: 'Move or rename a file or directory.',
      params: { 'source!': str('Current path.'), 'destination!': str('New path.') },
    },
    {
      name: 'copy_file',
      description: 'Copy a file to a new path.',
      params: { 'source!': str('Path to copy.'), 'destination!': str('Where to put the copy.') },
    },
    { name: 'delete_file', description: 'Delete a file or an empty directory.', params: path },
    {
      name: 'search_files',
      description: 'Find files whose names match a glob pattern, e.g. **/*.test.ts.',
      params: { 'pattern!': str('Glob pattern.'), path: str('Directory to search in.') },
      sideEffect: 'none',
    },
    {
      name: 'grep',
      description: 'Search file contents for a regular expression and return matching lines with file and line number.',
      params: {
        'pattern!': str('Regular expression.'),
        path: str('Directory or file.'),
        include: str('Only files matching this glob.'),
        ignore_case: bool('Case-insensitive.'),
      },
      sideEffect: 'none',
    },
    {
      name: 'get_file_info',
      description: 'Size, permissions, and created and modified times of a file or directory.',
      params: path,
      sideEffect: 'none',
    },
    {
      name: 'file_diff',
      description: 'Show the differences between two files as a unified diff.',
      params: { 'a!': str('First file.'), 'b!': str('Second file.') },
      sideEffect: 'none',
    },
  ],
}

export const git: NamespaceSpec = {
  ns: 'git',
  product: 'git',
  tags: ['vcs', 'local'],
  writes: 'local',
  resources: [],
  tools: [
    { name: 'status', description: 'Show the working tree status: staged, unstaged and untracked files.', params: {}, sideEffect: 'none' },
    {
      name: 'diff',
      description: 'Show unstaged changes, or the diff between two refs.',
      params: {
        from: str('Ref to compare from.'),
        to: str('Ref to compare to.'),
        staged: bool('Show staged changes instead.'),
        path: str('Only this path.'),
      },
      sideEffect: 'none',
    },
    {
      name: 'log',
      description: 'Show the commit history, newest first.',
      params: { max_count: int('How many commits.'), path: str('Only commits touching this path.'), author: str('Only this author.') },
      sideEffect: 'none',
    },
    {
      name: 'show',
      description: 'Show one commit: message, author and the changes it made.',
      params: { 'ref!': str('Commit SHA or ref.') },
      sideEffect: 'none',
    },
    {
      name: 'blame',
      description: 'Show who last changed each line of a file, and in which commit.',
      params: { 'path!': str('File.'), start_line: int('From line.'), end_line: int('To line.') },
      sideEffect: 'none',
    },
    { name: 'add', description: 'Stage files for the next commit.', params: { 'paths!': list('Paths to stage.') } },
    {
      name: 'commit',
      description: 'Record the staged changes as a commit with a message.',
      params: { 'message!': str('Commit message.'), all: bool('Stage tracked changes first.') },
    },
    {
      name: 'checkout',
      description: 'Switch to a branch or commit, or create a branch and switch to it.',
      params: { 'ref!': str('Branch or commit.'), create: bool('Create the branch.') },
    },
    {
      name: 'branch',
      description: 'List local branches, or create or delete one.',
      params: { name: str('Branch to create or delete.'), delete: bool('Delete it.') },
    },
    {
      name: 'pull',
      description: 'Fetch from the remote and integrate into the current branch.',
      params: { remote: str('Remote, default origin.'), rebase: bool('Rebase instead of merge.') },
    },
    {
      name: 'push',
      description: 'Push local commits of a branch to the remote.',
      params: { remote: str('Remote.'), branch: str('Branch.'), force_with_lease: bool('Force, safely.') },
      sideEffect: 'external',
    },
    {
      name: 'stash',
      description: 'Put uncommitted changes aside, or bring them back (pop).',
      params: { action: oneOf(['push', 'pop', 'list', 'drop'], 'What to do.'), message: str('Stash message.') },
    },
    {
      name: 'merge',
      description: 'Merge another branch into the current branch.',
      params: { 'branch!': str('Branch to merge.'), no_ff: bool('Always create a merge commit.') },
    },
    {
      name: 'rebase',
      description: "Replay the current branch's commits on top of another branch.",
      params: { 'onto!': str('Branch to rebase onto.') },
    },
    {
      name: 'reset',
      description: 'Move the current branch to a commit, unstaging or discarding changes.',
      params: { 'ref!': str('Target commit.'), mode: oneOf(['soft', 'mixed', 'hard'], 'What to keep.') },
    },
    {
      name: 'tag',
      description: 'Create a tag at a commit, e.g. for a release.',
      params: { 'name!': str('Tag name.'), ref: str('Commit.'), message: str('Annotated tag message.') },
    },
    {
      name: 'cherry_pick',
      description: 'Apply the changes of an existing commit onto the current branch.',
      params: { 'ref!': str('Commit to pick.') },
    },
    {
      name: 'clone',
      description: 'Clone a remote repository into a new directory.',
      params: { 'url!': str('Repository URL.'), directory: str('Target directory.'), depth: int('Shallow clone depth.') },
    },
  ],
}

export const shell: NamespaceSpec = {
  ns: 'shell',
  product: 'the shell',
  tags: ['local', 'terminal'],
  writes: 'local',
  resources: [],
  tools: [
    {
      name: 'run_command',
      description: 'Run a shell command in the workspace and return its exit code, stdout and stderr.',
      params: { 'command!': str('Command line.'), cwd: str('Working directory.'), timeout_ms: int('Time limit.') },
    },
    {
      name: 'start_background_process',
      description: 'Start a long-running command (a dev server, a watcher) in the background and return its id.',
      params: { 'command!': str('Command line.'), cwd: str('Working directory.') },
    },
    {
      name: 'read_process_output',
      description: 'Read new output of a background process.',
      params: { 'process_id!': str('Process id.') },
      sideEffect: 'none',
    },
    {
      name: 'kill_process',
      description: 'Stop a background process.',
      params: { 'process_id!': str('Process id.'), signal: oneOf(['SIGTERM', 'SIGKILL'], 'Signal.') },
    },
    {
      name: 'list_processes',
      description: 'List running processes with CPU and memory use.',
      params: { filter: str('Only commands containing this.') },
      sideEffect: 'none',
    },
    {
      name: 'get_environment',
      description: 'Show environment variables of the shell, secrets masked.',
      params: { names: list('Only these variables.') },
      sideEffect: 'none',
    },
    {
      name: 'which',
      description: 'Find where an executable is installed and its version.',
      params: { 'program!': str('Program name.') },
      sideEffect: 'none',
    },
  ],
}

const container = { 'container!': str('Container name or id.') }
export const docker: NamespaceSpec = {
  ns: 'docker',
  product: 'Docker',
  tags: ['containers', 'local'],
  writes: 'local',
  resources: [
    {
      name: 'container',
      ops: ['list', 'create', 'delete'],
      id: container,
      fields: {
        'image!': str('Image to run.'),
        name: str('Container name.'),
        ports: obj('Host port to container port.'),
        env: obj('Environment variables.'),
      },
      filters: { all: bool('Include stopped containers.') },
    },
    { name: 'image', ops: ['list', 'delete'], id: { 'image!': str('Image name:tag or id.') } },
    {
      name: 'volume',
      ops: ['list', 'create', 'delete'],
      id: { 'name!': str('Volume name.') },
      fields: { 'name!': str('Volume name.'), driver: str('Volume driver.') },
    },
    {
      name: 'network',
      ops: ['list', 'create'],
      id: { 'name!': str('Network name.') },
      fields: { 'name!': str('Network name.'), driver: oneOf(['bridge', 'overlay'], 'Driver.') },
    },
  ],
  tools: [
    { name: 'start_container', description: 'Start a stopped container.', params: container },
    {
      name: 'stop_container',
      description: 'Stop a running container gracefully.',
      params: { ...container, timeout_s: int('Seconds before kill.') },
    },
    { name: 'restart_container', description: 'Restart a container.', params: container },
    {
      name: 'container_logs',
      description: 'Fetch the stdout and stderr logs of a container.',
      params: { ...container, tail: int('Only the last lines.'), since: str('Only logs since, e.g. 10m.') },
      sideEffect: 'none',
    },
    {
      name: 'exec',
      description: 'Run a command inside a running container.',
      params: { ...container, 'command!': list('Command and arguments.') },
    },
    {
      name: 'inspect_container',
      description: 'Low-level details of a container: config, state, mounts and network settings.',
      params: container,
      sideEffect: 'none',
    },
    {
      name: 'container_stats',
      description: 'Live CPU, memory and network use of containers.',
      params: { container: str('One container; all if unset.') },
      sideEffect: 'none',
    },
    { name: 'pull_image', description: 'Pull an image from a registry.', params: { 'image!': str('Image name:tag.') } },
    {
      name: 'build_image',
      description: 'Build an image from a Dockerfile.',
      params: { 'context!': str('Build context directory.'), tag: str('Name:tag.'), dockerfile: str('Dockerfile path.') },
    },
    {
      name: 'push_image',
      description: 'Push an image to a registry.',
      params: { 'image!': str('Image name:tag.') },
      sideEffect: 'external',
    },
    {
      name: 'compose_up',
      description: 'Start the services of a docker compose file.',
      params: { file: str('Compose file.'), services: list('Only these services.'), detach: bool('Run in the background.') },
    },
    {
      name: 'compose_down',
      description: 'Stop and remove the services of a docker compose file.',
      params: { file: str('Compose file.'), volumes: bool('Also remove volumes.') },
    },
    {
      name: 'prune',
      description: 'Remove unused containers, images, networks and build cache to free disk space.',
      params: { all: bool('Also unused images, not just dangling ones.') },
    },
  ],
}

const page = { page_id: str('Tab id; the current tab if unset.') }
export const browser: NamespaceSpec = {
  ns: 'browser',
  product: 'the browser',
  tags: ['web', 'automation'],
  writes: 'external',
  resources: [],
  tools: [
    { name: 'navigate', description: 'Open a URL in the browser tab.', params: { 'url!': str('URL.'), ...page } },
    {
      name: 'click',
      description: 'Click an element of the page, found by CSS selector or visible text.',
      params: { 'target!': str('Selector or text.'), ...page },
    },
    {
      name: 'type_text',
      description: 'Type text into an input field, optionally pressing Enter.',
      params: { 'target!': str('Selector of the field.'), 'text!': str('Text to type.'), submit: bool('Press Enter after.') },
    },
    {
      name: 'screenshot',
      description: 'Take a screenshot of the page or of one element.',
      params: { target: str('Element selector.'), full_page: bool('The whole page.') },
      sideEffect: 'none',
    },
    { name: 'get_page_text', description: 'Return the visible text of the current page, as Markdown.', params: page, sideEffect: 'none' },
    {
      name: 'accessibility_snapshot',
      description: 'The accessibility tree of the page: roles, names and states of elements.',
      params: page,
      sideEffect: 'none',
    },
    {
      name: 'select_option',
      description: 'Choose an option in a dropdown (select element).',
      params: { 'target!': str('Selector.'), 'value!': str('Option value or label.') },
    },
    {
      name: 'wait_for',
      description: 'Wait until an element appears, or text shows up on the page.',
      params: { 'target!': str('Selector or text.'), timeout_ms: int('Time limit.') },
      sideEffect: 'none',
    },
    { name: 'go_back', description: 'Go back to the previous page in history.', params: page },
    {
      name: 'evaluate_javascript',
      description: 'Run a JavaScript expression in the page and return its result.',
      params: { 'expression!': str('JavaScript.') },
    },
    { name: 'list_tabs', description: 'List the open browser tabs with their titles and URLs.', params: {}, sideEffect: 'none' },
    {
      name: 'upload_file',
      description: 'Attach a local file to a file input on the page.',
      params: { 'target!': str('Selector of the file input.'), 'path!': str('Local file.') },
    },
    {
      name: 'get_console_messages',
      description: 'Console messages and JavaScript errors logged by the page.',
      params: page,
      sideEffect: 'none',
    },
  ],
}

export const web: NamespaceSpec = {
  ns: 'web',
  product: 'the web',
  tags: ['web', 'research'],
  writes: 'none',
  resources: [],
  tools: [
    {
      name: 'search',
      description: 'Search the web and return titles, URLs and snippets of the top results.',
      params: {
        'query!': str('Search terms.'),
        count: int('How many results.'),
        freshness: oneOf(['day', 'week', 'month'], 'Only recent pages.'),
      },
      sideEffect: 'none',
    },
    {
      name: 'fetch_url',
      description: 'Download a web page and convert it to Markdown text.',
      params: { 'url!': str('URL.'), max_length: int('Truncate after this many characters.') },
      sideEffect: 'none',
    },
    {
      name: 'news_search',
      description: 'Search recent news articles about a topic.',
      params: { 'query!': str('Topic.'), since: str('ISO date.') },
      sideEffect: 'none',
    },
    { name: 'image_search', description: 'Search the web for images.', params: { 'query!': str('What to look for.') }, sideEffect: 'none' },
    {
      name: 'get_weather',
      description: 'Current weather and forecast for a city or coordinates.',
      params: { 'location!': str('City or lat,lon.'), days: int('Forecast days.') },
      sideEffect: 'none',
    },
    {
      name: 'geocode',
      description: 'Turn an address into latitude and longitude, or coordinates into an address.',
      params: { 'address!': str('Address or lat,lon.') },
      sideEffect: 'none',
    },
    {
      name: 'currency_convert',
      description: "Convert an amount between currencies at today's exchange rate.",
      params: { 'amount!': { type: 'number', description: 'Amount.' }, 'from!': str('ISO code.'), 'to!': str('ISO code.') },
      sideEffect: 'none',
    },
    {
      name: 'whois',
      description: 'Registration details of a domain name: registrar, dates, name servers.',
      params: { 'domain!': str('Domain.') },
      sideEffect: 'none',
    },
    {
      name: 'check_url_status',
      description: 'Check whether a URL is up: HTTP status, redirect chain and response time.',
      params: { 'url!': str('URL.') },
      sideEffect: 'none',
    },
    {
      name: 'wikipedia_summary',
      description: 'The summary of a Wikipedia article.',
      params: { 'title!': str('Article title.'), language: str('Language code.') },
      sideEffect: 'none',
    },
    {
      name: 'http_request',
      description: 'Send an HTTP request with any method, headers and body, and return the response.',
      params: {
        'url!': str('URL.'),
        method: oneOf(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], 'Method.'),
        headers: obj('Headers.'),
        body: str('Body.'),
      },
      sideEffect: 'external',
    },
  ],
}
