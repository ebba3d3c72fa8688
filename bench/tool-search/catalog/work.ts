/** Work management, documents and calendars: Asana, Trello, Notion, Confluence, Google Calendar, Google Drive, Dropbox, BambooHR. */
import { bool, int, list, obj, oneOf, str, type NamespaceSpec } from './spec.ts'

const taskId = { 'task_id!': str('Task id.') }
export const asana: NamespaceSpec = {
  ns: 'asana',
  product: 'Asana',
  tags: ['tasks', 'project-management'],
  writes: 'external',
  resources: [
    {
      name: 'task',
      ops: ['list', 'get', 'create', 'update', 'delete', 'search'],
      id: taskId,
      fields: {
        'name!': str('Task name.'),
        notes: str('Description.'),
        assignee: str('Assignee.'),
        due_on: str('Due date.'),
        projects: list('Projects.'),
      },
      filters: { project: str('Project.'), assignee: str('Assignee.'), completed_since: str('ISO.') },
    },
    {
      name: 'project',
      ops: ['list', 'get', 'create'],
      id: { 'project_id!': str('Project id.') },
      fields: { 'name!': str('Name.'), team: str('Team.'), due_on: str('Due date.') },
    },
    {
      name: 'section',
      ops: ['list', 'create'],
      parent: { 'project_id!': str('Project id.') },
      id: { 'section_id!': str('Section id.') },
      fields: { 'name!': str('Section name.') },
    },
  ],
  tools: [
    { name: 'complete_task', description: 'Mark an Asana task complete.', params: taskId },
    {
      name: 'add_subtask',
      description: 'Add a subtask under an Asana task.',
      params: { ...taskId, 'name!': str('Subtask.'), assignee: str('Assignee.') },
    },
    { name: 'add_task_comment', description: 'Comment on an Asana task (a story).', params: { ...taskId, 'text!': str('Comment.') } },
    {
      name: 'move_task_to_section',
      description: 'Move a task to a section (column) of a project board.',
      params: { ...taskId, 'section_id!': str('Section.') },
    },
    {
      name: 'list_my_tasks',
      description: 'Your tasks in Asana that are not done, by due date.',
      params: { workspace: str('Workspace.') },
      sideEffect: 'none',
    },
  ],
}

const card = { 'card_id!': str('Card id.') }
export const trello: NamespaceSpec = {
  ns: 'trello',
  product: 'Trello',
  tags: ['tasks', 'kanban'],
  writes: 'external',
  resources: [
    {
      name: 'board',
      ops: ['list', 'get', 'create'],
      id: { 'board_id!': str('Board id.') },
      fields: { 'name!': str('Board name.'), description: str('Description.') },
    },
    {
      name: 'list',
      ops: ['create'],
      id: { 'list_id!': str('List id.') },
      fields: { 'board_id!': str('Board.'), 'name!': str('List (column) name.') },
    },
    {
      name: 'card',
      ops: ['get', 'create', 'update', 'delete'],
      id: card,
      fields: {
        'list_id!': str('List.'),
        'name!': str('Card title.'),
        desc: str('Description.'),
        due: str('Due date.'),
        members: list('Members.'),
      },
    },
  ],
  tools: [
    {
      name: 'get_board_lists',
      description: 'The lists (columns) of a Trello board with their cards.',
      params: { 'board_id!': str('Board.') },
      sideEffect: 'none',
    },
    {
      name: 'move_card',
      description: 'Move a Trello card to another list, e.g. from Doing to Done.',
      params: { ...card, 'list_id!': str('Target list.') },
    },
    { name: 'add_card_comment', description: 'Comment on a Trello card.', params: { ...card, 'text!': str('Comment.') } },
    {
      name: 'add_checklist',
      description: 'Add a checklist with items to a Trello card.',
      params: { ...card, 'name!': str('Checklist.'), items: list('Items.') },
    },
    { name: 'add_label_to_card', description: 'Put a coloured label on a card.', params: { ...card, 'label_id!': str('Label.') } },
    { name: 'search_cards', description: 'Search Trello cards by text.', params: { 'query!': str('Text.') }, sideEffect: 'none' },
  ],
}

const pageId = { 'page_id!': str('Page id.') }
export const notion: NamespaceSpec = {
  ns: 'notion',
  product: 'Notion',
  tags: ['docs', 'wiki', 'notes'],
  writes: 'external',
  resources: [
    {
      name: 'page',
      ops: ['get', 'create', 'update'],
      id: pageId,
      fields: {
        'parent!': str('Parent page or database.'),
        'title!': str('Title.'),
        properties: obj('Database properties.'),
        content: str('Markdown content.'),
      },
    },
    {
      name: 'database',
      ops: ['get', 'create'],
      id: { 'database_id!': str('Database id.') },
      fields: { 'parent_page!': str('Parent page.'), 'title!': str('Title.'), 'properties!': obj('Property schema.') },
    },
  ],
  tools: [
    {
      name: 'search',
      description: 'Search Notion pages and databases by title and content.',
      params: { 'query!': str('Text.'), filter: oneOf(['page', 'database'], 'Only pages or databases.') },
      sideEffect: 'none',
    },
    {
      name: 'query_database',
      description: 'Query the rows of a Notion database with filters and sorts.',
      params: { 'database_id!': str('Database.'), filter: obj('Filter.'), sorts: list('Sorts.', 'object') },
      sideEffect: 'none',
    },
    { name: 'get_page_content', description: 'Read the blocks (text) of a Notion page.', params: pageId, sideEffect: 'none' },
    {
      name: 'append_blocks',
      description: 'Append paragraphs, to-dos or headings to the end of a Notion page.',
      params: { ...pageId, 'blocks!': list('Blocks.', 'object') },
    },
    { name: 'add_comment', description: 'Comment on a Notion page or discussion.', params: { ...pageId, 'text!': str('Comment.') } },
    { name: 'archive_page', description: 'Archive (trash) a Notion page.', params: pageId },
  ],
}

const space = { 'space_key!': str('Space key.') }
export const confluence: NamespaceSpec = {
  ns: 'confluence',
  product: 'Confluence',
  tags: ['docs', 'wiki'],
  writes: 'external',
  resources: [
    {
      name: 'page',
      ops: ['get', 'create', 'update', 'delete'],
      id: { 'page_id!': str('Page id.') },
      fields: { ...space, 'title!': str('Title.'), 'body!': str('Storage-format body.'), parent_id: str('Parent page.') },
    },
    { name: 'space', ops: ['list', 'get'], id: space },
  ],
  tools: [
    {
      name: 'search',
      description: 'Search Confluence content with CQL, e.g. text ~ "onboarding" and space = ENG.',
      params: { 'cql!': str('CQL.'), limit: int('Results.') },
      sideEffect: 'none',
    },
    {
      name: 'get_page_children',
      description: 'The child pages of a Confluence page.',
      params: { 'page_id!': str('Page.') },
      sideEffect: 'none',
    },
    {
      name: 'add_page_comment',
      description: 'Comment on a Confluence page.',
      params: { 'page_id!': str('Page.'), 'body!': str('Comment.') },
    },
    { name: 'add_label', description: 'Add a label to a Confluence page.', params: { 'page_id!': str('Page.'), 'label!': str('Label.') } },
    {
      name: 'get_page_history',
      description: 'Versions of a page: who changed it and when.',
      params: { 'page_id!': str('Page.') },
      sideEffect: 'none',
    },
  ],
}

const calendar = { calendar_id: str('Calendar id, "primary" by default.') }
export const gcal: NamespaceSpec = {
  ns: 'gcal',
  product: 'Google Calendar',
  tags: ['calendar', 'google', 'meetings'],
  writes: 'external',
  resources: [
    {
      name: 'event',
      ops: ['list', 'get', 'create', 'update', 'delete'],
      parent: calendar,
      id: { 'event_id!': str('Event id.') },
      fields: {
        'summary!': str('Title.'),
        'start!': str('ISO start.'),
        'end!': str('ISO end.'),
        attendees: list('Guest emails.'),
        location: str('Where.'),
        conference: bool('Add a Google Meet link.'),
      },
      filters: { time_min: str('ISO.'), time_max: str('ISO.'), q: str('Text.') },
    },
    {
      name: 'calendar',
      ops: ['list', 'create'],
      id: { 'calendar_id!': str('Calendar id.') },
      fields: { 'summary!': str('Calendar name.'), time_zone: str('Time zone.') },
    },
  ],
  tools: [
    {
      name: 'find_free_slots',
      description: 'Find times when everyone in a list is free (free/busy).',
      params: { 'emails!': list('People.'), 'time_min!': str('ISO.'), 'time_max!': str('ISO.'), duration_minutes: int('Length.') },
      sideEffect: 'none',
    },
    {
      name: 'quick_add_event',
      description: 'Create an event from a sentence like "Lunch with Ana tomorrow at 1pm".',
      params: { ...calendar, 'text!': str('Sentence.') },
    },
    {
      name: 'respond_to_event',
      description: 'Answer an invitation: yes, no or maybe.',
      params: { ...calendar, 'event_id!': str('Event.'), 'response!': oneOf(['accepted', 'declined', 'tentative'], 'Answer.') },
    },
    {
      name: 'share_calendar',
      description: 'Share a calendar with someone, read-only or with edit rights.',
      params: { ...calendar, 'email!': str('Who.'), role: oneOf(['reader', 'writer'], 'Access.') },
    },
  ],
}

const fileId = { 'file_id!': str('File id.') }
export const gdrive: NamespaceSpec = {
  ns: 'gdrive',
  product: 'Google Drive',
  tags: ['files', 'google', 'storage'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'search_files',
      description: 'Search Google Drive for files by name, content or type.',
      params: { 'query!': str("Text, or a Drive query like mimeType contains 'pdf'."), limit: int('Results.') },
      sideEffect: 'none',
    },
    {
      name: 'read_file',
      description: 'Read a Drive file; Google Docs come back as Markdown, Sheets as CSV.',
      params: fileId,
      sideEffect: 'none',
    },
    {
      name: 'upload_file',
      description: 'Upload a file to Google Drive into a folder.',
      params: { 'name!': str('File name.'), 'content!': str('Content.'), folder_id: str('Folder.') },
    },
    {
      name: 'create_folder',
      description: 'Create a folder in Google Drive.',
      params: { 'name!': str('Name.'), parent_id: str('Parent folder.') },
    },
    {
      name: 'share_file',
      description: 'Share a Drive file or folder with a person or group.',
      params: { ...fileId, 'email!': str('Who.'), role: oneOf(['reader', 'commenter', 'writer'], 'Access.') },
    },
    { name: 'list_permissions', description: 'Who has access to a Drive file.', params: fileId, sideEffect: 'none' },
    { name: 'move_file', description: 'Move a Drive file to another folder.', params: { ...fileId, 'folder_id!': str('Destination.') } },
    { name: 'delete_file', description: 'Move a Drive file to the trash.', params: fileId },
    {
      name: 'export_file',
      description: 'Export a Google Doc, Sheet or Slides file to PDF, DOCX or XLSX.',
      params: { ...fileId, 'mime_type!': str('Target format.') },
      sideEffect: 'none',
    },
    {
      name: 'create_document',
      description: 'Create a new Google Doc with text.',
      params: { 'title!': str('Title.'), content: str('Text.'), folder_id: str('Folder.') },
    },
  ],
}

const dbPath = { 'path!': str('Dropbox path, e.g. /Reports/q3.pdf.') }
export const dropbox: NamespaceSpec = {
  ns: 'dropbox',
  product: 'Dropbox',
  tags: ['files', 'storage'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'list_folder',
      description: 'List the contents of a Dropbox folder.',
      params: { ...dbPath, recursive: bool('Include subfolders.') },
      sideEffect: 'none',
    },
    { name: 'download', description: 'Download a file from Dropbox.', params: dbPath, sideEffect: 'none' },
    {
      name: 'upload',
      description: 'Upload a file to Dropbox.',
      params: { ...dbPath, 'content!': str('Content.'), overwrite: bool('Replace an existing file.') },
    },
    { name: 'create_shared_link', description: 'Create a link anyone can use to view a Dropbox file.', params: dbPath },
    {
      name: 'search',
      description: 'Search Dropbox for files and folders by name.',
      params: { 'query!': str('Text.') },
      sideEffect: 'none',
    },
    {
      name: 'move',
      description: 'Move or rename a file or folder in Dropbox.',
      params: { 'from_path!': str('From.'), 'to_path!': str('To.') },
    },
    { name: 'delete', description: 'Delete a file or folder in Dropbox.', params: dbPath },
    {
      name: 'restore_revision',
      description: 'Restore an earlier version of a Dropbox file.',
      params: { ...dbPath, 'rev!': str('Revision.') },
    },
  ],
}

const employee = { 'employee_id!': str('Employee id.') }
export const bamboohr: NamespaceSpec = {
  ns: 'bamboohr',
  product: 'BambooHR',
  tags: ['hr', 'people'],
  writes: 'external',
  resources: [
    {
      name: 'employee',
      ops: ['list', 'get', 'create', 'update'],
      id: employee,
      fields: {
        'first_name!': str('First name.'),
        'last_name!': str('Last name.'),
        job_title: str('Job title.'),
        department: str('Department.'),
        hire_date: str('ISO.'),
      },
      about: 'Employees are the people on the company payroll.',
    },
  ],
  tools: [
    {
      name: 'list_time_off_requests',
      description: 'Vacation and sick leave requests, by status and dates.',
      params: { start: str('ISO.'), end: str('ISO.'), status: oneOf(['requested', 'approved', 'denied'], 'Status.') },
      sideEffect: 'none',
    },
    {
      name: 'request_time_off',
      description: 'Request vacation days for an employee.',
      params: { ...employee, 'start!': str('ISO.'), 'end!': str('ISO.'), type: str('Vacation, sick...') },
    },
    {
      name: 'approve_time_off',
      description: 'Approve or deny a time-off request.',
      params: { 'request_id!': str('Request.'), 'approve!': bool('Approve or deny.'), note: str('Note.') },
    },
    {
      name: 'whos_out',
      description: 'Who is out of office today or in a date range.',
      params: { start: str('ISO.'), end: str('ISO.') },
      sideEffect: 'none',
    },
    {
      name: 'get_org_chart',
      description: 'The reporting lines: who reports to whom.',
      params: { root: str('Start from this employee.') },
      sideEffect: 'none',
    },
    {
      name: 'terminate_employee',
      description: "Record an employee's termination date and reason.",
      params: { ...employee, 'date!': str('ISO.'), reason: str('Reason.') },
    },
  ],
}
