/** Code hosting, issue tracking and CI: GitHub, GitLab, Bitbucket, Jira, Linear, Sentry, CircleCI, Jenkins, npm. */
import { bool, int, list, obj, oneOf, str, type NamespaceSpec, type Params } from './spec.ts'

const repo: Params = { 'owner!': str('Repository owner: a user or organization login.'), 'repo!': str('Repository name.') }
const state = oneOf(['open', 'closed', 'all'], 'Which state to include (default open).')

export const github: NamespaceSpec = {
  ns: 'github',
  product: 'GitHub',
  tags: ['code', 'vcs'],
  writes: 'external',
  resources: [
    {
      name: 'repository',
      plural: 'repositories',
      ops: ['list', 'get', 'create', 'update', 'delete'],
      id: repo,
      fields: { 'name!': str('Repository name.'), description: str('A short description.'), private: bool('Make it private.') },
      filters: {
        owner: str('Only repositories of this user or organization.'),
        visibility: oneOf(['all', 'public', 'private'], 'Visibility.'),
      },
    },
    {
      name: 'issue',
      ops: ['list', 'get', 'create', 'update', 'search'],
      parent: repo,
      id: { 'issue_number!': int('The issue number.') },
      fields: {
        'title!': str('Issue title.'),
        body: str('Issue body in Markdown.'),
        assignees: list('Logins to assign.'),
        labels: list('Label names.'),
      },
      filters: { state, labels: list('Only issues with all these labels.'), assignee: str('Only issues assigned to this login.') },
      about: 'Issues track bugs, tasks and feature requests.',
    },
    {
      name: 'pull_request',
      ops: ['list', 'get', 'create', 'update'],
      parent: repo,
      id: { 'pull_number!': int('The pull request number.') },
      fields: {
        'title!': str('Title.'),
        'head!': str('The branch that holds the changes.'),
        'base!': str('The branch to merge into.'),
        body: str('Description in Markdown.'),
        draft: bool('Open it as a draft.'),
      },
      filters: { state, base: str('Only pull requests into this branch.') },
    },
    {
      name: 'branch',
      plural: 'branches',
      ops: ['list', 'get', 'create', 'delete'],
      parent: repo,
      id: { 'branch!': str('Branch name.') },
      fields: { 'branch!': str('Name of the new branch.'), 'from_ref!': str('Branch, tag or commit SHA to start from.') },
    },
    {
      name: 'release',
      ops: ['list', 'get', 'create', 'delete'],
      parent: repo,
      id: { 'release_id!': int('Release id.') },
      fields: {
        'tag_name!': str('Tag to release, e.g. v1.4.0.'),
        name: str('Release title.'),
        body: str('Release notes in Markdown.'),
        prerelease: bool('Mark as a pre-release.'),
      },
    },
    {
      name: 'workflow_run',
      ops: ['list', 'get'],
      parent: repo,
      id: { 'run_id!': int('Workflow run id.') },
      filters: {
        branch: str('Only runs on this branch.'),
        status: oneOf(['queued', 'in_progress', 'completed', 'failure', 'success'], 'Run status.'),
        workflow: str('Workflow file name, e.g. ci.yml.'),
      },
      about: 'A workflow run is one execution of a GitHub Actions workflow.',
    },
    {
      name: 'gist',
      ops: ['list', 'get', 'create', 'delete'],
      id: { 'gist_id!': str('Gist id.') },
      fields: {
        'files!': obj('File names mapped to their contents.'),
        description: str('Description.'),
        public: bool('Make the gist public.'),
      },
    },
    {
      name: 'label',
      ops: ['list', 'create', 'delete'],
      parent: repo,
      id: { 'name!': str('Label name.') },
      fields: { 'name!': str('Label name.'), color: str('Hex colour without #.'), description: str('What the label means.') },
    },
    {
      name: 'webhook',
      ops: ['list', 'create', 'delete'],
      parent: repo,
      id: { 'hook_id!': int('Webhook id.') },
      fields: {
        'url!': str('Payload URL.'),
        events: list('Events that trigger it, e.g. push, pull_request.'),
        secret: str('Secret used to sign payloads.'),
      },
    },
  ],
  tools: [
    {
      name: 'merge_pull_request',
      description: 'Merge a pull request into its base branch, as a merge commit, a squash or a rebase.',
      params: {
        ...repo,
        'pull_number!': int('Pull request number.'),
        merge_method: oneOf(['merge', 'squash', 'rebase'], 'How to merge.'),
        commit_title: str('Title of the merge commit.'),
      },
    },
    {
      name: 'request_reviewers',
      description: 'Ask users or teams to review a pull request.',
      params: {
        ...repo,
        'pull_number!': int('Pull request number.'),
        reviewers: list('User logins.'),
        team_reviewers: list('Team slugs.'),
      },
    },
    {
      name: 'create_review',
      description: 'Submit a review on a pull request: approve it, request changes, or leave a comment.',
      params: {
        ...repo,
        'pull_number!': int('Pull request number.'),
        'event!': oneOf(['APPROVE', 'REQUEST_CHANGES', 'COMMENT'], 'The review verdict.'),
        body: str('Review text.'),
      },
    },
    {
      name: 'list_pull_request_files',
      description: 'List the files a pull request changes, with additions and deletions per file.',
      params: { ...repo, 'pull_number!': int('Pull request number.') },
      sideEffect: 'none',
    },
    {
      name: 'get_pull_request_diff',
      description: 'Get the unified diff of a pull request.',
      params: { ...repo, 'pull_number!': int('Pull request number.') },
      sideEffect: 'none',
    },
    {
      name: 'add_issue_comment',
      description: 'Add a comment to the conversation of an issue or a pull request.',
      params: { ...repo, 'issue_number!': int('Issue or pull request number.'), 'body!': str('Comment in Markdown.') },
    },
    {
      name: 'get_file_contents',
      description: 'Read a file, or list a directory, from a repository at a branch, tag or commit.',
      params: { ...repo, 'path!': str('Path in the repository.'), ref: str('Branch, tag or SHA (default branch if unset).') },
      sideEffect: 'none',
    },
    {
      name: 'create_or_update_file',
      description: 'Create or update one file in a repository, as a commit on a branch.',
      params: {
        ...repo,
        'path!': str('Path of the file.'),
        'content!': str('New file content.'),
        'message!': str('Commit message.'),
        branch: str('Branch to commit to.'),
        sha: str('Blob SHA of the file being replaced.'),
      },
    },
    {
      name: 'list_commits',
      description: 'List commits on a branch, newest first, optionally only those touching a path.',
      params: {
        ...repo,
        sha: str('Branch or commit to start from.'),
        path: str('Only commits touching this path.'),
        author: str('Only commits by this author.'),
      },
      sideEffect: 'none',
    },
    {
      name: 'compare_commits',
      description: 'Compare two branches, tags or commits: the commits and changed files between them.',
      params: { ...repo, 'base!': str('Base ref.'), 'head!': str('Head ref.') },
      sideEffect: 'none',
    },
    {
      name: 'search_code',
      description: 'Search source code across GitHub repositories with code search syntax.',
      params: { 'query!': str('Search query, e.g. "useState repo:facebook/react".'), limit: int('Most results.') },
      sideEffect: 'none',
    },
    {
      name: 'fork_repository',
      description: 'Fork a repository into your account or into an organization.',
      params: { ...repo, organization: str('Organization to fork into.') },
    },
    {
      name: 'rerun_workflow',
      description: 'Re-run a GitHub Actions workflow run, or only its failed jobs.',
      params: { ...repo, 'run_id!': int('Workflow run id.'), failed_only: bool('Re-run only the failed jobs.') },
    },
    {
      name: 'dispatch_workflow',
      description: 'Start a GitHub Actions workflow by hand (workflow_dispatch) on a branch, with inputs.',
      params: { ...repo, 'workflow!': str('Workflow file name or id.'), 'ref!': str('Branch or tag.'), inputs: obj('Workflow inputs.') },
    },
    {
      name: 'get_job_logs',
      description: 'Download the log output of a GitHub Actions job.',
      params: { ...repo, 'job_id!': int('Job id.') },
      sideEffect: 'none',
    },
    { name: 'star_repository', description: 'Star a repository as the authenticated user.', params: repo },
    {
      name: 'list_notifications',
      description: "List the authenticated user's unread GitHub notifications.",
      params: { all: bool('Include read notifications.') },
      sideEffect: 'none',
    },
    { name: 'get_me', description: 'Get the profile of the authenticated GitHub user.', params: {}, sideEffect: 'none' },
    {
      name: 'add_collaborator',
      description: 'Invite a user to collaborate on a repository with a given permission.',
      params: {
        ...repo,
        'username!': str('Login to invite.'),
        permission: oneOf(['pull', 'triage', 'push', 'maintain', 'admin'], 'Permission level.'),
      },
    },
  ],
}

const project: Params = { 'project_id!': str('Project id or URL-encoded path, e.g. group/app.') }
export const gitlab: NamespaceSpec = {
  ns: 'gitlab',
  product: 'GitLab',
  tags: ['code', 'vcs'],
  writes: 'external',
  resources: [
    {
      name: 'project',
      ops: ['list', 'get', 'create', 'delete'],
      id: project,
      fields: {
        'name!': str('Project name.'),
        namespace_id: int('Group to create it in.'),
        visibility: oneOf(['private', 'internal', 'public'], 'Visibility.'),
      },
      filters: { owned: bool('Only projects you own.'), search: str('Name contains.') },
    },
    {
      name: 'issue',
      ops: ['list', 'get', 'create', 'update'],
      parent: project,
      id: { 'issue_iid!': int('Issue IID within the project.') },
      fields: {
        'title!': str('Title.'),
        description: str('Description.'),
        labels: list('Labels.'),
        assignee_ids: list('User ids.', 'integer'),
      },
      filters: { state: oneOf(['opened', 'closed', 'all'], 'State.'), labels: list('Labels.') },
    },
    {
      name: 'merge_request',
      ops: ['list', 'get', 'create', 'update'],
      parent: project,
      id: { 'merge_request_iid!': int('Merge request IID.') },
      fields: {
        'source_branch!': str('Branch with the changes.'),
        'target_branch!': str('Branch to merge into.'),
        'title!': str('Title.'),
        description: str('Description.'),
      },
      filters: { state: oneOf(['opened', 'merged', 'closed', 'all'], 'State.') },
    },
    {
      name: 'pipeline',
      ops: ['list', 'get'],
      parent: project,
      id: { 'pipeline_id!': int('Pipeline id.') },
      filters: { ref: str('Branch or tag.'), status: oneOf(['running', 'pending', 'success', 'failed', 'canceled'], 'Status.') },
      about: "A pipeline is one run of the project's CI/CD jobs.",
    },
    {
      name: 'branch',
      plural: 'branches',
      ops: ['list', 'create', 'delete'],
      parent: project,
      id: { 'branch!': str('Branch name.') },
      fields: { 'branch!': str('New branch name.'), 'ref!': str('Branch, tag or SHA to start from.') },
    },
  ],
  tools: [
    {
      name: 'merge_merge_request',
      description: 'Accept a merge request and merge it, optionally squashing its commits.',
      params: {
        ...project,
        'merge_request_iid!': int('Merge request IID.'),
        squash: bool('Squash commits.'),
        should_remove_source_branch: bool('Delete the source branch afterwards.'),
      },
    },
    {
      name: 'retry_pipeline',
      description: 'Retry the failed jobs of a CI/CD pipeline.',
      params: { ...project, 'pipeline_id!': int('Pipeline id.') },
    },
    {
      name: 'cancel_pipeline',
      description: 'Cancel a running pipeline and all of its jobs.',
      params: { ...project, 'pipeline_id!': int('Pipeline id.') },
    },
    {
      name: 'get_job_trace',
      description: 'Get the log (trace) of a CI job.',
      params: { ...project, 'job_id!': int('Job id.') },
      sideEffect: 'none',
    },
    {
      name: 'create_note',
      description: 'Comment on an issue or merge request (a note, in GitLab terms).',
      params: {
        ...project,
        'noteable_type!': oneOf(['issue', 'merge_request'], 'What to comment on.'),
        'noteable_iid!': int('Its IID.'),
        'body!': str('Comment text.'),
      },
    },
    {
      name: 'get_repository_file',
      description: "Read a file from a project's repository at a ref.",
      params: { ...project, 'file_path!': str('Path.'), ref: str('Branch, tag or SHA.') },
      sideEffect: 'none',
    },
    {
      name: 'get_merge_request_changes',
      description: 'Show the files and diffs of a merge request.',
      params: { ...project, 'merge_request_iid!': int('Merge request IID.') },
      sideEffect: 'none',
    },
  ],
}

const workspace: Params = { 'workspace!': str('Workspace slug.'), 'repo_slug!': str('Repository slug.') }
export const bitbucket: NamespaceSpec = {
  ns: 'bitbucket',
  product: 'Bitbucket',
  tags: ['code', 'vcs'],
  writes: 'external',
  resources: [
    {
      name: 'repository',
      plural: 'repositories',
      ops: ['list', 'get', 'create'],
      id: workspace,
      fields: { 'workspace!': str('Workspace slug.'), 'repo_slug!': str('Slug.'), is_private: bool('Private repository.') },
      filters: { 'workspace!': str('Workspace slug.') },
    },
    {
      name: 'pull_request',
      ops: ['list', 'get', 'create'],
      parent: workspace,
      id: { 'pull_request_id!': int('Pull request id.') },
      fields: {
        'title!': str('Title.'),
        'source_branch!': str('Source branch.'),
        destination_branch: str('Destination branch.'),
        description: str('Description.'),
      },
      filters: { state: oneOf(['OPEN', 'MERGED', 'DECLINED'], 'State.') },
    },
    { name: 'pipeline', ops: ['list', 'get'], parent: workspace, id: { 'pipeline_uuid!': str('Pipeline UUID.') } },
  ],
  tools: [
    {
      name: 'approve_pull_request',
      description: 'Approve a Bitbucket pull request as the current user.',
      params: { ...workspace, 'pull_request_id!': int('Pull request id.') },
    },
    {
      name: 'decline_pull_request',
      description: 'Decline (close without merging) a Bitbucket pull request.',
      params: { ...workspace, 'pull_request_id!': int('Pull request id.') },
    },
    {
      name: 'merge_pull_request',
      description: 'Merge a Bitbucket pull request.',
      params: {
        ...workspace,
        'pull_request_id!': int('Pull request id.'),
        merge_strategy: oneOf(['merge_commit', 'squash', 'fast_forward'], 'Strategy.'),
      },
    },
    {
      name: 'run_pipeline',
      description: 'Start a Bitbucket Pipelines build for a branch.',
      params: { ...workspace, 'branch!': str('Branch to build.') },
    },
  ],
}

const issueKey = { 'issue_key!': str('Issue key, e.g. PROJ-123.') }
export const jira: NamespaceSpec = {
  ns: 'jira',
  product: 'Jira',
  tags: ['tickets', 'project-management'],
  writes: 'external',
  resources: [
    {
      name: 'issue',
      ops: ['get', 'create', 'update', 'delete'],
      id: issueKey,
      fields: {
        'project_key!': str('Project key, e.g. PROJ.'),
        'summary!': str('One-line summary.'),
        issue_type: oneOf(['Bug', 'Task', 'Story', 'Epic'], 'Issue type.'),
        description: str('Description.'),
        priority: oneOf(['Highest', 'High', 'Medium', 'Low'], 'Priority.'),
      },
      about: 'Issues are the bugs, stories and tasks of a Jira project.',
    },
    { name: 'project', ops: ['list', 'get'], id: { 'project_key!': str('Project key.') } },
    {
      name: 'sprint',
      ops: ['list', 'get', 'create', 'update'],
      parent: { 'board_id!': int('Agile board id.') },
      id: { 'sprint_id!': int('Sprint id.') },
      fields: { 'name!': str('Sprint name.'), start_date: str('ISO date.'), end_date: str('ISO date.'), goal: str('Sprint goal.') },
      filters: { state: oneOf(['active', 'future', 'closed'], 'State.') },
    },
    { name: 'board', ops: ['list', 'get'], id: { 'board_id!': int('Board id.') }, filters: { project_key: str('Project key.') } },
    {
      name: 'component',
      ops: ['list', 'create'],
      parent: { 'project_key!': str('Project key.') },
      id: { 'component_id!': str('Component id.') },
      fields: { 'name!': str('Component name.'), lead: str('Component lead account id.') },
    },
  ],
  tools: [
    {
      name: 'search_issues',
      description: 'Search Jira issues with a JQL query, e.g. project = PROJ AND status = "In Progress".',
      params: { 'jql!': str('JQL query.'), fields: list('Fields to return.'), limit: int('Most results.') },
      sideEffect: 'none',
    },
    {
      name: 'transition_issue',
      description: 'Move a Jira issue to another status in its workflow (To Do, In Progress, Done).',
      params: { ...issueKey, 'transition!': str('Transition name or id.'), comment: str('Comment to add with the transition.') },
    },
    {
      name: 'assign_issue',
      description: 'Assign a Jira issue to a person, or unassign it.',
      params: { ...issueKey, account_id: str('Assignee account id; empty to unassign.') },
    },
    { name: 'add_comment', description: 'Add a comment to a Jira issue.', params: { ...issueKey, 'body!': str('Comment text.') } },
    { name: 'list_comments', description: 'List the comments on a Jira issue.', params: issueKey, sideEffect: 'none' },
    {
      name: 'link_issues',
      description: 'Link two Jira issues, e.g. "blocks" or "relates to".',
      params: { 'inward_issue!': str('Issue key.'), 'outward_issue!': str('Issue key.'), 'link_type!': str('Link type name.') },
    },
    {
      name: 'add_worklog',
      description: 'Log time spent on a Jira issue.',
      params: { ...issueKey, 'time_spent!': str('Duration, e.g. 2h 30m.'), comment: str('What was done.') },
    },
    {
      name: 'list_transitions',
      description: 'List the workflow transitions available for an issue in its current status.',
      params: issueKey,
      sideEffect: 'none',
    },
    {
      name: 'move_issues_to_sprint',
      description: 'Move issues into a sprint.',
      params: { 'sprint_id!': int('Sprint id.'), 'issue_keys!': list('Issue keys.') },
    },
    {
      name: 'add_watcher',
      description: 'Add a user as a watcher of an issue so they get notified of changes.',
      params: { ...issueKey, 'account_id!': str('Account id.') },
    },
    {
      name: 'create_version',
      description: 'Create a release version (fix version) in a Jira project.',
      params: { 'project_key!': str('Project key.'), 'name!': str('Version name, e.g. 2.3.0.'), release_date: str('ISO date.') },
    },
  ],
}

const linearId = { 'id!': str('Issue id or identifier, e.g. ENG-42.') }
export const linear: NamespaceSpec = {
  ns: 'linear',
  product: 'Linear',
  tags: ['tickets', 'project-management'],
  writes: 'external',
  resources: [
    {
      name: 'issue',
      ops: ['list', 'get', 'create', 'update', 'search'],
      id: linearId,
      fields: {
        'team_id!': str('Team id.'),
        'title!': str('Title.'),
        description: str('Markdown description.'),
        priority: int('0 none, 1 urgent ... 4 low.'),
        assignee_id: str('Assignee user id.'),
        state_id: str('Workflow state id.'),
      },
      filters: { team_id: str('Team.'), assignee_id: str('Assignee.'), state: str('State name.') },
    },
    {
      name: 'project',
      ops: ['list', 'get', 'create'],
      id: { 'project_id!': str('Project id.') },
      fields: { 'name!': str('Project name.'), team_ids: list('Teams.'), target_date: str('ISO date.') },
    },
    {
      name: 'cycle',
      ops: ['list', 'get'],
      parent: { 'team_id!': str('Team id.') },
      id: { 'cycle_id!': str('Cycle id.') },
      about: "Cycles are Linear's time-boxed iterations, like sprints.",
    },
    { name: 'team', ops: ['list'], id: { 'team_id!': str('Team id.') } },
  ],
  tools: [
    { name: 'add_comment', description: 'Comment on a Linear issue.', params: { ...linearId, 'body!': str('Markdown comment.') } },
    {
      name: 'list_workflow_states',
      description: 'List the workflow states (Backlog, Todo, In Progress, Done...) of a Linear team.',
      params: { 'team_id!': str('Team id.') },
      sideEffect: 'none',
    },
    { name: 'add_label', description: 'Add a label to a Linear issue.', params: { ...linearId, 'label_id!': str('Label id.') } },
    { name: 'get_viewer', description: 'Get the Linear user the API key belongs to.', params: {}, sideEffect: 'none' },
  ],
}

const sentryOrg = { 'organization_slug!': str('Organization slug.') }
export const sentry: NamespaceSpec = {
  ns: 'sentry',
  product: 'Sentry',
  tags: ['monitoring', 'errors'],
  writes: 'external',
  resources: [
    {
      name: 'issue',
      ops: ['list', 'get', 'update', 'delete'],
      parent: sentryOrg,
      id: { 'issue_id!': str('Issue id.') },
      fields: { status: oneOf(['resolved', 'unresolved', 'ignored'], 'New status.'), assigned_to: str('User or team.') },
      filters: { project: str('Project slug.'), query: str('Sentry search, e.g. is:unresolved level:error.') },
      about: 'A Sentry issue groups error events with the same fingerprint.',
    },
    {
      name: 'project',
      ops: ['list', 'get', 'create'],
      parent: sentryOrg,
      id: { 'project_slug!': str('Project slug.') },
      fields: { 'name!': str('Project name.'), 'team!': str('Team slug.'), platform: str('Platform, e.g. python.') },
    },
    {
      name: 'release',
      ops: ['list', 'create'],
      parent: sentryOrg,
      id: { 'version!': str('Release version.') },
      fields: { 'version!': str('Version string.'), projects: list('Project slugs.') },
    },
  ],
  tools: [
    {
      name: 'get_latest_event',
      description: 'Get the most recent event of a Sentry issue, with its stack trace, tags and breadcrumbs.',
      params: { ...sentryOrg, 'issue_id!': str('Issue id.') },
      sideEffect: 'none',
    },
    {
      name: 'list_issue_events',
      description: 'List the individual error events grouped under an issue.',
      params: { ...sentryOrg, 'issue_id!': str('Issue id.') },
      sideEffect: 'none',
    },
    {
      name: 'resolve_issue',
      description: 'Mark a Sentry issue resolved, optionally in the next release.',
      params: { ...sentryOrg, 'issue_id!': str('Issue id.'), in_next_release: bool('Resolve in the next release.') },
    },
    {
      name: 'get_project_stats',
      description: 'Error counts of a project over time, for a chart or a trend.',
      params: {
        ...sentryOrg,
        'project_slug!': str('Project slug.'),
        stat: oneOf(['received', 'rejected'], 'Which counter.'),
        resolution: oneOf(['10s', '1h', '1d'], 'Bucket size.'),
      },
      sideEffect: 'none',
    },
  ],
}

export const circleci: NamespaceSpec = {
  ns: 'circleci',
  product: 'CircleCI',
  tags: ['ci'],
  writes: 'external',
  resources: [
    {
      name: 'pipeline',
      ops: ['list', 'get'],
      parent: { 'project_slug!': str('Project slug, e.g. gh/org/repo.') },
      id: { 'pipeline_id!': str('Pipeline id.') },
      filters: { branch: str('Branch.') },
    },
    { name: 'workflow', ops: ['get'], id: { 'workflow_id!': str('Workflow id.') } },
  ],
  tools: [
    {
      name: 'trigger_pipeline',
      description: 'Trigger a new CircleCI pipeline on a branch or tag.',
      params: { 'project_slug!': str('Project slug.'), branch: str('Branch.'), tag: str('Tag.'), parameters: obj('Pipeline parameters.') },
    },
    {
      name: 'list_workflow_jobs',
      description: 'List the jobs of a CircleCI workflow with their status.',
      params: { 'workflow_id!': str('Workflow id.') },
      sideEffect: 'none',
    },
    {
      name: 'get_job_output',
      description: 'Get the output of the steps of a CircleCI job, to see why it failed.',
      params: { 'project_slug!': str('Project slug.'), 'job_number!': int('Job number.') },
      sideEffect: 'none',
    },
    {
      name: 'rerun_workflow',
      description: 'Rerun a CircleCI workflow, from the start or from failed jobs.',
      params: { 'workflow_id!': str('Workflow id.'), from_failed: bool('Only failed jobs.') },
    },
    { name: 'cancel_workflow', description: 'Cancel a running CircleCI workflow.', params: { 'workflow_id!': str('Workflow id.') } },
    {
      name: 'get_flaky_tests',
      description: 'List tests that flip between passing and failing on the same code.',
      params: { 'project_slug!': str('Project slug.') },
      sideEffect: 'none',
    },
  ],
}

export const jenkins: NamespaceSpec = {
  ns: 'jenkins',
  product: 'Jenkins',
  tags: ['ci'],
  writes: 'external',
  resources: [
    { name: 'job', ops: ['list', 'get'], id: { 'job_name!': str('Full job name, e.g. team/app/main.') } },
    { name: 'build', ops: ['list', 'get'], parent: { 'job_name!': str('Job name.') }, id: { 'build_number!': int('Build number.') } },
  ],
  tools: [
    {
      name: 'trigger_build',
      description: 'Start a Jenkins job build, with parameters.',
      params: { 'job_name!': str('Job name.'), parameters: obj('Build parameters.') },
    },
    {
      name: 'get_console_output',
      description: 'Get the console log of a Jenkins build.',
      params: { 'job_name!': str('Job name.'), 'build_number!': int('Build number.') },
      sideEffect: 'none',
    },
    {
      name: 'stop_build',
      description: 'Abort a running Jenkins build.',
      params: { 'job_name!': str('Job name.'), 'build_number!': int('Build number.') },
    },
    { name: 'get_queue', description: 'Show the builds waiting in the Jenkins queue and why.', params: {}, sideEffect: 'none' },
  ],
}

export const npm: NamespaceSpec = {
  ns: 'npm',
  product: 'npm',
  tags: ['packages', 'javascript'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'search_packages',
      description: 'Search the npm registry for packages by keyword.',
      params: { 'query!': str('Keywords.'), limit: int('Most results.') },
      sideEffect: 'none',
    },
    {
      name: 'get_package',
      description: "Get an npm package's metadata: versions, dist-tags, maintainers, license.",
      params: { 'name!': str('Package name.') },
      sideEffect: 'none',
    },
    {
      name: 'get_download_counts',
      description: 'Download counts of an npm package over the last day, week or month.',
      params: { 'name!': str('Package name.'), period: oneOf(['last-day', 'last-week', 'last-month'], 'Period.') },
      sideEffect: 'none',
    },
    {
      name: 'audit_dependencies',
      description: 'Check a package-lock for dependencies with known security vulnerabilities.',
      params: { 'lockfile!': str('Contents of package-lock.json.') },
      sideEffect: 'none',
    },
    {
      name: 'publish_package',
      description: 'Publish a package tarball to the npm registry.',
      params: { 'tarball!': str('Path to the .tgz.'), tag: str('Dist-tag, default latest.') },
    },
    {
      name: 'deprecate_version',
      description: 'Mark versions of an npm package deprecated with a message.',
      params: { 'name!': str('Package name.'), 'range!': str('Version range.'), 'message!': str('Deprecation message.') },
    },
  ],
}
