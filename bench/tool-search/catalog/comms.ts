/** Messaging and mail: Slack, Microsoft Teams, Discord, Gmail, Outlook, Zoom, Twilio, SendGrid, Intercom. */
import { bool, int, list, obj, oneOf, str, type NamespaceSpec } from './spec.ts'

const channel = { 'channel!': str('Channel id or name, e.g. #deploys.') }
export const slack: NamespaceSpec = {
  ns: 'slack',
  product: 'Slack',
  tags: ['chat', 'messaging'],
  writes: 'external',
  resources: [
    {
      name: 'channel',
      ops: ['list', 'get', 'create'],
      id: channel,
      fields: { 'name!': str('Channel name, lowercase, no spaces.'), is_private: bool('Private channel.'), topic: str('Channel topic.') },
      filters: { types: oneOf(['public', 'private', 'all'], 'Which channels.'), exclude_archived: bool('Skip archived.') },
    },
    { name: 'user', ops: ['list', 'get'], id: { 'user!': str('User id or email.') } },
    {
      name: 'reminder',
      ops: ['list', 'create', 'delete'],
      id: { 'reminder_id!': str('Reminder id.') },
      fields: {
        'text!': str('What to remind about.'),
        'time!': str('When, e.g. "in 20 minutes" or a timestamp.'),
        user: str('Who to remind.'),
      },
    },
  ],
  tools: [
    {
      name: 'post_message',
      description: 'Post a message to a Slack channel, optionally as a reply in a thread.',
      params: {
        ...channel,
        'text!': str('Message text (mrkdwn).'),
        thread_ts: str('Timestamp of the parent message to reply in its thread.'),
      },
    },
    {
      name: 'send_direct_message',
      description: 'Send a direct message to one Slack user.',
      params: { 'user!': str('User id or email.'), 'text!': str('Message.') },
    },
    {
      name: 'update_message',
      description: 'Edit a message the bot posted earlier.',
      params: { ...channel, 'ts!': str('Message timestamp.'), 'text!': str('New text.') },
    },
    { name: 'delete_message', description: 'Delete a message from a channel.', params: { ...channel, 'ts!': str('Message timestamp.') } },
    {
      name: 'get_channel_history',
      description: 'Read the recent messages of a Slack channel.',
      params: { ...channel, limit: int('How many messages.'), oldest: str('Only after this timestamp.') },
      sideEffect: 'none',
    },
    {
      name: 'get_thread_replies',
      description: 'Read all replies in a message thread.',
      params: { ...channel, 'thread_ts!': str('Parent message timestamp.') },
      sideEffect: 'none',
    },
    {
      name: 'search_messages',
      description: 'Search Slack messages across channels, with modifiers like from:@user or in:#channel.',
      params: { 'query!': str('Search query.'), sort: oneOf(['score', 'timestamp'], 'Order.') },
      sideEffect: 'none',
    },
    {
      name: 'add_reaction',
      description: 'Add an emoji reaction to a message.',
      params: { ...channel, 'ts!': str('Message timestamp.'), 'emoji!': str('Emoji name without colons.') },
    },
    { name: 'invite_to_channel', description: 'Invite users to a Slack channel.', params: { ...channel, 'users!': list('User ids.') } },
    { name: 'set_channel_topic', description: 'Set the topic of a Slack channel.', params: { ...channel, 'topic!': str('New topic.') } },
    { name: 'archive_channel', description: 'Archive a Slack channel.', params: channel },
    {
      name: 'upload_file',
      description: 'Share a file in a Slack channel.',
      params: { ...channel, 'content!': str('File content.'), 'filename!': str('File name.'), title: str('Title.') },
    },
    { name: 'pin_message', description: 'Pin a message to a channel.', params: { ...channel, 'ts!': str('Message timestamp.') } },
    {
      name: 'set_status',
      description: 'Set your Slack status text and emoji, with an expiry.',
      params: { 'text!': str('Status text.'), emoji: str('Emoji.'), expiration: str('When it clears.') },
    },
    {
      name: 'schedule_message',
      description: 'Schedule a message to be posted to a channel at a later time.',
      params: { ...channel, 'text!': str('Message.'), 'post_at!': str('ISO timestamp.') },
    },
  ],
}

const team = { 'team_id!': str('Team id.') }
export const msteams: NamespaceSpec = {
  ns: 'msteams',
  product: 'Microsoft Teams',
  tags: ['chat', 'messaging', 'microsoft'],
  writes: 'external',
  resources: [
    { name: 'team', ops: ['list', 'get'], id: team },
    {
      name: 'channel',
      ops: ['list', 'create'],
      parent: team,
      id: { 'channel_id!': str('Channel id.') },
      fields: { 'display_name!': str('Name.'), description: str('Description.') },
    },
  ],
  tools: [
    {
      name: 'send_channel_message',
      description: 'Post a message in a Microsoft Teams channel.',
      params: { ...team, 'channel_id!': str('Channel id.'), 'content!': str('Message (HTML allowed).') },
    },
    {
      name: 'send_chat_message',
      description: 'Send a message in a one-on-one or group chat in Teams.',
      params: { 'chat_id!': str('Chat id.'), 'content!': str('Message.') },
    },
    {
      name: 'list_channel_messages',
      description: 'Read recent messages in a Teams channel.',
      params: { ...team, 'channel_id!': str('Channel id.'), top: int('How many.') },
      sideEffect: 'none',
    },
    {
      name: 'reply_to_message',
      description: 'Reply to a message in a Teams channel thread.',
      params: { ...team, 'channel_id!': str('Channel id.'), 'message_id!': str('Message id.'), 'content!': str('Reply.') },
    },
    {
      name: 'add_team_member',
      description: 'Add a user to a Microsoft Teams team.',
      params: { ...team, 'user_id!': str('User id.'), owner: bool('Make them an owner.') },
    },
    {
      name: 'create_online_meeting',
      description: 'Create a Teams online meeting and get its join link.',
      params: { 'subject!': str('Subject.'), 'start!': str('ISO start.'), 'end!': str('ISO end.') },
    },
  ],
}

const guild = { 'guild_id!': str('Server (guild) id.') }
export const discord: NamespaceSpec = {
  ns: 'discord',
  product: 'Discord',
  tags: ['chat', 'community'],
  writes: 'external',
  resources: [
    {
      name: 'channel',
      ops: ['list', 'create', 'delete'],
      parent: guild,
      id: { 'channel_id!': str('Channel id.') },
      fields: { 'name!': str('Channel name.'), type: oneOf(['text', 'voice', 'forum'], 'Kind.') },
    },
    {
      name: 'role',
      ops: ['list', 'create'],
      parent: guild,
      id: { 'role_id!': str('Role id.') },
      fields: { 'name!': str('Role name.'), color: int('Colour.'), permissions: str('Permission bit set.') },
    },
  ],
  tools: [
    {
      name: 'send_message',
      description: 'Send a message to a Discord channel.',
      params: { 'channel_id!': str('Channel id.'), 'content!': str('Message.'), embeds: list('Rich embeds.', 'object') },
    },
    {
      name: 'read_messages',
      description: 'Read recent messages of a Discord channel.',
      params: { 'channel_id!': str('Channel id.'), limit: int('How many.') },
      sideEffect: 'none',
    },
    {
      name: 'add_role_to_member',
      description: 'Give a member of a Discord server a role.',
      params: { ...guild, 'user_id!': str('User id.'), 'role_id!': str('Role id.') },
    },
    {
      name: 'kick_member',
      description: 'Remove a member from a Discord server.',
      params: { ...guild, 'user_id!': str('User id.'), reason: str('Audit log reason.') },
    },
    {
      name: 'ban_member',
      description: 'Ban a user from a Discord server and delete their recent messages.',
      params: { ...guild, 'user_id!': str('User id.'), delete_message_days: int('Days of messages to delete.') },
    },
    {
      name: 'create_thread',
      description: 'Start a thread from a message in a Discord channel.',
      params: { 'channel_id!': str('Channel id.'), 'message_id!': str('Message id.'), 'name!': str('Thread name.') },
    },
  ],
}

const message = { 'message_id!': str('Message id.') }
export const gmail: NamespaceSpec = {
  ns: 'gmail',
  product: 'Gmail',
  tags: ['email', 'google'],
  writes: 'external',
  resources: [
    { name: 'label', ops: ['list', 'create', 'delete'], id: { 'label_id!': str('Label id.') }, fields: { 'name!': str('Label name.') } },
    {
      name: 'draft',
      ops: ['list', 'get', 'create', 'delete'],
      id: { 'draft_id!': str('Draft id.') },
      fields: { 'to!': list('Recipients.'), 'subject!': str('Subject.'), 'body!': str('Body.'), cc: list('Cc.') },
    },
    {
      name: 'filter',
      ops: ['list', 'create', 'delete'],
      id: { 'filter_id!': str('Filter id.') },
      fields: { 'criteria!': obj('From, to, subject or query to match.'), 'action!': obj('Labels to add or remove, forward to.') },
      about: 'Filters sort incoming mail automatically.',
    },
  ],
  tools: [
    {
      name: 'send_email',
      description: 'Send an email from your Gmail account.',
      params: {
        'to!': list('Recipients.'),
        'subject!': str('Subject.'),
        'body!': str('Body (text or HTML).'),
        cc: list('Cc.'),
        attachments: list('Local file paths.'),
      },
    },
    {
      name: 'search_emails',
      description: 'Search your mailbox with Gmail search operators like from:, is:unread, has:attachment.',
      params: { 'query!': str('Gmail search query.'), max_results: int('How many.') },
      sideEffect: 'none',
    },
    { name: 'read_email', description: 'Read one email: headers, body and attachment names.', params: message, sideEffect: 'none' },
    {
      name: 'reply_to_email',
      description: 'Reply to an email in the same thread.',
      params: { ...message, 'body!': str('Reply text.'), reply_all: bool('Reply to all recipients.') },
    },
    {
      name: 'forward_email',
      description: 'Forward an email to other people.',
      params: { ...message, 'to!': list('Recipients.'), note: str('Text above the forwarded mail.') },
    },
    {
      name: 'modify_labels',
      description: 'Add or remove labels on an email, e.g. to archive it or mark it read.',
      params: { ...message, add: list('Label ids to add.'), remove: list('Label ids to remove, e.g. UNREAD or INBOX.') },
    },
    { name: 'trash_email', description: 'Move an email to the trash.', params: message },
    {
      name: 'get_attachment',
      description: 'Download an attachment of an email.',
      params: { ...message, 'attachment_id!': str('Attachment id.') },
      sideEffect: 'none',
    },
    {
      name: 'get_thread',
      description: 'Read a whole email conversation.',
      params: { 'thread_id!': str('Thread id.') },
      sideEffect: 'none',
    },
    {
      name: 'set_vacation_responder',
      description: 'Turn the out-of-office auto-reply on or off, with its message and dates.',
      params: {
        'enabled!': bool('On or off.'),
        subject: str('Subject.'),
        message: str('Auto-reply text.'),
        start: str('ISO date.'),
        end: str('ISO date.'),
      },
    },
  ],
}

export const outlook: NamespaceSpec = {
  ns: 'outlook',
  product: 'Outlook',
  tags: ['email', 'microsoft', 'calendar'],
  writes: 'external',
  resources: [
    {
      name: 'folder',
      ops: ['list', 'create'],
      id: { 'folder_id!': str('Mail folder id.') },
      fields: { 'display_name!': str('Folder name.') },
    },
    {
      name: 'contact',
      ops: ['list', 'get', 'create'],
      id: { 'contact_id!': str('Contact id.') },
      fields: { 'display_name!': str('Name.'), emails: list('Email addresses.'), phone: str('Phone.') },
    },
    {
      name: 'event',
      ops: ['list', 'create', 'update', 'delete'],
      id: { 'event_id!': str('Event id.') },
      fields: {
        'subject!': str('Subject.'),
        'start!': str('ISO start.'),
        'end!': str('ISO end.'),
        attendees: list('Attendee emails.'),
        location: str('Location.'),
      },
      about: 'Events are entries in the Outlook calendar.',
    },
  ],
  tools: [
    {
      name: 'send_mail',
      description: 'Send an email from an Outlook / Microsoft 365 mailbox.',
      params: {
        'to!': list('Recipients.'),
        'subject!': str('Subject.'),
        'body!': str('Body.'),
        importance: oneOf(['low', 'normal', 'high'], 'Importance.'),
      },
    },
    {
      name: 'list_messages',
      description: 'List messages in an Outlook folder, newest first.',
      params: { folder: str('Folder, default Inbox.'), unread_only: bool('Only unread.'), top: int('How many.') },
      sideEffect: 'none',
    },
    { name: 'get_message', description: 'Read one Outlook email.', params: message, sideEffect: 'none' },
    {
      name: 'move_message',
      description: 'Move an Outlook email to another folder.',
      params: { ...message, 'folder_id!': str('Destination folder.') },
    },
    {
      name: 'find_meeting_times',
      description: 'Suggest meeting times when all attendees are free.',
      params: { 'attendees!': list('Emails.'), 'duration_minutes!': int('Length.'), within_days: int('Look this many days ahead.') },
      sideEffect: 'none',
    },
    {
      name: 'accept_event',
      description: 'Accept a meeting invitation.',
      params: { 'event_id!': str('Event id.'), comment: str('Note to the organizer.') },
    },
    {
      name: 'decline_event',
      description: 'Decline a meeting invitation.',
      params: { 'event_id!': str('Event id.'), comment: str('Note to the organizer.') },
    },
  ],
}

const meeting = { 'meeting_id!': str('Meeting id.') }
export const zoom: NamespaceSpec = {
  ns: 'zoom',
  product: 'Zoom',
  tags: ['meetings', 'video'],
  writes: 'external',
  resources: [
    {
      name: 'meeting',
      ops: ['list', 'get', 'create', 'update', 'delete'],
      id: meeting,
      fields: {
        'topic!': str('Topic.'),
        start_time: str('ISO start.'),
        duration: int('Minutes.'),
        agenda: str('Agenda.'),
        password: str('Passcode.'),
      },
      about: 'Zoom meetings are video calls with a join link.',
    },
    {
      name: 'webinar',
      ops: ['list', 'create'],
      id: { 'webinar_id!': str('Webinar id.') },
      fields: { 'topic!': str('Topic.'), start_time: str('ISO start.'), duration: int('Minutes.') },
    },
  ],
  tools: [
    {
      name: 'list_recordings',
      description: 'List cloud recordings of past Zoom meetings.',
      params: { from: str('ISO date.'), to: str('ISO date.') },
      sideEffect: 'none',
    },
    { name: 'get_meeting_transcript', description: 'Get the transcript of a recorded Zoom meeting.', params: meeting, sideEffect: 'none' },
    { name: 'list_participants', description: 'Who joined a past Zoom meeting, and for how long.', params: meeting, sideEffect: 'none' },
    {
      name: 'add_registrant',
      description: 'Register someone for a meeting or webinar and send them the join link.',
      params: { ...meeting, 'email!': str('Email.'), 'first_name!': str('First name.'), last_name: str('Last name.') },
    },
  ],
}

export const twilio: NamespaceSpec = {
  ns: 'twilio',
  product: 'Twilio',
  tags: ['sms', 'telephony'],
  writes: 'external',
  resources: [
    {
      name: 'message',
      ops: ['list', 'get'],
      id: { 'sid!': str('Message SID.') },
      filters: { to: str('Recipient number.'), from: str('Sender number.'), date_sent: str('ISO date.') },
    },
    {
      name: 'call',
      ops: ['list', 'get'],
      id: { 'sid!': str('Call SID.') },
      filters: { status: oneOf(['queued', 'ringing', 'in-progress', 'completed', 'failed'], 'Status.') },
    },
    { name: 'phone_number', ops: ['list'], id: { 'sid!': str('Number SID.') } },
  ],
  tools: [
    {
      name: 'send_sms',
      description: 'Send an SMS text message to a phone number.',
      params: { 'to!': str('E.164 number.'), 'body!': str('Text.'), from: str('Sender number.') },
    },
    {
      name: 'send_whatsapp',
      description: 'Send a WhatsApp message through Twilio.',
      params: { 'to!': str('E.164 number.'), 'body!': str('Text.') },
    },
    {
      name: 'make_call',
      description: 'Place an outbound phone call that plays a message or runs TwiML.',
      params: { 'to!': str('E.164 number.'), 'twiml!': str('TwiML or text to speak.') },
    },
    {
      name: 'lookup_number',
      description: 'Look up a phone number: carrier, line type and whether it is valid.',
      params: { 'number!': str('Number.') },
      sideEffect: 'none',
    },
    {
      name: 'buy_phone_number',
      description: 'Buy a new phone number in a country or area code.',
      params: { 'country!': str('ISO country.'), area_code: str('Area code.') },
    },
    {
      name: 'send_verification_code',
      description: 'Send a one-time verification code by SMS or call (Verify).',
      params: { 'to!': str('Number or email.'), channel: oneOf(['sms', 'call', 'email'], 'Channel.') },
    },
  ],
}

export const sendgrid: NamespaceSpec = {
  ns: 'sendgrid',
  product: 'SendGrid',
  tags: ['email', 'marketing'],
  writes: 'external',
  resources: [
    {
      name: 'template',
      ops: ['list', 'get', 'create'],
      id: { 'template_id!': str('Template id.') },
      fields: { 'name!': str('Template name.'), html: str('HTML content.') },
    },
    {
      name: 'contact_list',
      ops: ['list', 'create', 'delete'],
      id: { 'list_id!': str('List id.') },
      fields: { 'name!': str('List name.') },
    },
  ],
  tools: [
    {
      name: 'send_email',
      description: 'Send a transactional email through SendGrid, optionally from a template with data.',
      params: {
        'to!': list('Recipients.'),
        'from!': str('Sender.'),
        subject: str('Subject.'),
        html: str('HTML body.'),
        template_id: str('Dynamic template.'),
        template_data: obj('Template variables.'),
      },
    },
    {
      name: 'add_contacts',
      description: 'Add or update marketing contacts, optionally into lists.',
      params: { 'contacts!': list('Contacts with email and names.', 'object'), list_ids: list('Lists.') },
    },
    {
      name: 'get_email_stats',
      description: 'Delivery statistics: sent, delivered, opened, clicked, bounced, per day.',
      params: { 'start_date!': str('ISO date.'), end_date: str('ISO date.') },
      sideEffect: 'none',
    },
    {
      name: 'list_bounces',
      description: 'List email addresses that bounced.',
      params: { start_time: int('Unix time.') },
      sideEffect: 'none',
    },
    {
      name: 'list_suppressions',
      description: 'List unsubscribed and suppressed email addresses.',
      params: { group_id: int('Unsubscribe group.') },
      sideEffect: 'none',
    },
  ],
}

const conversation = { 'conversation_id!': str('Conversation id.') }
export const intercom: NamespaceSpec = {
  ns: 'intercom',
  product: 'Intercom',
  tags: ['support', 'chat', 'crm'],
  writes: 'external',
  resources: [
    {
      name: 'contact',
      ops: ['get', 'create', 'update', 'search'],
      id: { 'contact_id!': str('Contact id.') },
      fields: {
        'email!': str('Email.'),
        name: str('Name.'),
        role: oneOf(['user', 'lead'], 'User or lead.'),
        custom_attributes: obj('Custom data.'),
      },
    },
    {
      name: 'conversation',
      ops: ['list', 'get', 'search'],
      id: conversation,
      filters: { state: oneOf(['open', 'closed', 'snoozed'], 'State.'), assignee_id: str('Admin.') },
      about: 'Conversations are support chats with customers.',
    },
    {
      name: 'article',
      ops: ['list', 'create', 'update'],
      id: { 'article_id!': str('Article id.') },
      fields: { 'title!': str('Title.'), 'body!': str('HTML body.'), state: oneOf(['draft', 'published'], 'State.') },
    },
  ],
  tools: [
    {
      name: 'reply_to_conversation',
      description: 'Reply to a customer in an Intercom conversation, or add an internal note.',
      params: { ...conversation, 'body!': str('Reply.'), message_type: oneOf(['comment', 'note'], 'Customer reply or internal note.') },
    },
    { name: 'close_conversation', description: 'Close an Intercom conversation.', params: conversation },
    {
      name: 'assign_conversation',
      description: 'Assign a conversation to a teammate or a team inbox.',
      params: { ...conversation, 'assignee_id!': str('Admin or team id.') },
    },
    {
      name: 'tag_contact',
      description: 'Tag an Intercom contact.',
      params: { 'contact_id!': str('Contact id.'), 'tag!': str('Tag name.') },
    },
  ],
}
