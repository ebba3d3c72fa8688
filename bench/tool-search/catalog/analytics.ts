/** Product analytics and marketing: Mixpanel, PostHog, Google Analytics, Mailchimp, Calendly, Typeform, Figma. */
import { bool, int, list, obj, oneOf, str, type NamespaceSpec } from './spec.ts'

const range = { 'from_date!': str('ISO date.'), 'to_date!': str('ISO date.') }
export const mixpanel: NamespaceSpec = {
  ns: 'mixpanel',
  product: 'Mixpanel',
  tags: ['analytics', 'product'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'query_events',
      description: 'Count Mixpanel events over time, segmented by a property.',
      params: { ...range, 'event!': str('Event name.'), on: str('Property to segment by.') },
      sideEffect: 'none',
    },
    {
      name: 'query_funnel',
      description: 'Conversion through the steps of a saved funnel.',
      params: { ...range, 'funnel_id!': int('Funnel.') },
      sideEffect: 'none',
    },
    {
      name: 'query_retention',
      description: 'How many users come back after their first event, by cohort.',
      params: { ...range, born_event: str('First event.'), event: str('Return event.') },
      sideEffect: 'none',
    },
    {
      name: 'get_user_profile',
      description: 'The profile properties and recent activity of one user.',
      params: { 'distinct_id!': str('User id.') },
      sideEffect: 'none',
    },
    {
      name: 'track_event',
      description: 'Send an event to Mixpanel.',
      params: { 'event!': str('Event name.'), 'distinct_id!': str('User.'), properties: obj('Properties.') },
    },
    { name: 'list_cohorts', description: 'Saved cohorts of users.', params: {}, sideEffect: 'none' },
  ],
}

export const posthog: NamespaceSpec = {
  ns: 'posthog',
  product: 'PostHog',
  tags: ['analytics', 'product', 'feature-flags'],
  writes: 'external',
  resources: [
    {
      name: 'feature_flag',
      ops: ['list', 'get', 'create', 'update', 'delete'],
      id: { 'flag_id!': int('Flag id.') },
      fields: {
        'key!': str('Flag key used in code.'),
        name: str('Description.'),
        rollout_percentage: int('Percent of users.'),
        active: bool('Enabled.'),
      },
      about: 'Feature flags turn features on for some users.',
    },
    { name: 'insight', ops: ['list', 'get'], id: { 'insight_id!': int('Insight id.') } },
    {
      name: 'experiment',
      ops: ['list', 'get'],
      id: { 'experiment_id!': int('Experiment id.') },
      about: 'Experiments are A/B tests on a feature flag.',
    },
  ],
  tools: [
    {
      name: 'hogql_query',
      description: 'Run a HogQL (SQL) query over PostHog events and persons.',
      params: { 'query!': str('HogQL.') },
      sideEffect: 'none',
    },
    {
      name: 'list_session_recordings',
      description: 'Session replays of users, filtered by person or event.',
      params: { person_id: str('Person.'), date_from: str('ISO.') },
      sideEffect: 'none',
    },
    {
      name: 'get_experiment_results',
      description: 'Results of an A/B test: conversion per variant and significance.',
      params: { 'experiment_id!': int('Experiment.') },
      sideEffect: 'none',
    },
  ],
}

export const ganalytics: NamespaceSpec = {
  ns: 'ganalytics',
  product: 'Google Analytics',
  tags: ['analytics', 'google', 'web'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'run_report',
      description: 'Run a Google Analytics 4 report with dimensions and metrics, e.g. sessions by country.',
      params: { 'property_id!': str('GA4 property.'), 'dimensions!': list('Dimensions.'), 'metrics!': list('Metrics.'), ...range },
      sideEffect: 'none',
    },
    {
      name: 'run_realtime_report',
      description: 'Active users on the site right now, by page or country.',
      params: { 'property_id!': str('Property.'), dimensions: list('Dimensions.') },
      sideEffect: 'none',
    },
    { name: 'list_properties', description: 'Google Analytics properties you can read.', params: {}, sideEffect: 'none' },
    {
      name: 'get_metadata',
      description: 'Dimensions and metrics available for reports.',
      params: { 'property_id!': str('Property.') },
      sideEffect: 'none',
    },
  ],
}

export const mailchimp: NamespaceSpec = {
  ns: 'mailchimp',
  product: 'Mailchimp',
  tags: ['email', 'marketing', 'newsletter'],
  writes: 'external',
  resources: [
    {
      name: 'campaign',
      ops: ['list', 'get', 'create', 'delete'],
      id: { 'campaign_id!': str('Campaign id.') },
      fields: { 'list_id!': str('Audience.'), 'subject!': str('Subject line.'), 'from_name!': str('From.'), html: str('Content.') },
      about: 'A campaign is one newsletter email sent to an audience.',
    },
    { name: 'audience', ops: ['list', 'get'], id: { 'list_id!': str('Audience id.') } },
  ],
  tools: [
    { name: 'send_campaign', description: 'Send a Mailchimp campaign now.', params: { 'campaign_id!': str('Campaign.') } },
    {
      name: 'schedule_campaign',
      description: 'Schedule a campaign to go out at a time.',
      params: { 'campaign_id!': str('Campaign.'), 'send_at!': str('ISO.') },
    },
    {
      name: 'add_subscriber',
      description: 'Subscribe an email address to an audience (mailing list).',
      params: { 'list_id!': str('Audience.'), 'email!': str('Email.'), merge_fields: obj('Name and other fields.'), tags: list('Tags.') },
    },
    {
      name: 'unsubscribe',
      description: 'Unsubscribe an email address from an audience.',
      params: { 'list_id!': str('Audience.'), 'email!': str('Email.') },
    },
    {
      name: 'get_campaign_report',
      description: 'Opens, clicks, bounces and unsubscribes of a sent campaign.',
      params: { 'campaign_id!': str('Campaign.') },
      sideEffect: 'none',
    },
  ],
}

export const calendly: NamespaceSpec = {
  ns: 'calendly',
  product: 'Calendly',
  tags: ['scheduling', 'meetings'],
  writes: 'external',
  resources: [
    { name: 'event_type', ops: ['list', 'get'], id: { 'uuid!': str('Event type.') }, label: 'event type' },
    {
      name: 'scheduled_event',
      ops: ['list', 'get'],
      id: { 'uuid!': str('Event.') },
      filters: { min_start_time: str('ISO.'), status: oneOf(['active', 'canceled'], 'Status.') },
      label: 'booked meeting',
    },
  ],
  tools: [
    {
      name: 'create_scheduling_link',
      description: 'Create a single-use booking link for an event type to send to someone.',
      params: { 'event_type!': str('Event type.') },
    },
    {
      name: 'cancel_event',
      description: 'Cancel a booked Calendly meeting and tell the invitee why.',
      params: { 'uuid!': str('Event.'), reason: str('Reason.') },
    },
    {
      name: 'list_invitees',
      description: 'The people who booked a Calendly event, with their answers.',
      params: { 'uuid!': str('Event.') },
      sideEffect: 'none',
    },
  ],
}

export const typeform: NamespaceSpec = {
  ns: 'typeform',
  product: 'Typeform',
  tags: ['forms', 'surveys'],
  writes: 'external',
  resources: [
    {
      name: 'form',
      ops: ['list', 'get', 'create', 'delete'],
      id: { 'form_id!': str('Form id.') },
      fields: { 'title!': str('Title.'), 'fields!': list('Questions.', 'object') },
      about: 'Forms are surveys and questionnaires.',
    },
  ],
  tools: [
    {
      name: 'get_responses',
      description: 'Answers people submitted to a Typeform survey.',
      params: { 'form_id!': str('Form.'), since: str('ISO.'), completed: bool('Only finished ones.') },
      sideEffect: 'none',
    },
    {
      name: 'get_insights',
      description: 'Views, completion rate and drop-off per question of a form.',
      params: { 'form_id!': str('Form.') },
      sideEffect: 'none',
    },
  ],
}

const fileKey = { 'file_key!': str('Figma file key.') }
export const figma: NamespaceSpec = {
  ns: 'figma',
  product: 'Figma',
  tags: ['design'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'get_file',
      description: 'The document tree of a Figma file: pages, frames and layers.',
      params: { ...fileKey, depth: int('Depth.') },
      sideEffect: 'none',
    },
    {
      name: 'export_images',
      description: 'Render frames or layers of a Figma file to PNG or SVG.',
      params: { ...fileKey, 'node_ids!': list('Nodes.'), format: oneOf(['png', 'svg', 'pdf'], 'Format.'), scale: int('Scale.') },
      sideEffect: 'none',
    },
    { name: 'get_comments', description: 'Comments left on a Figma file.', params: fileKey, sideEffect: 'none' },
    {
      name: 'post_comment',
      description: 'Comment on a Figma file, optionally pinned to a spot.',
      params: { ...fileKey, 'message!': str('Comment.') },
    },
    { name: 'get_styles', description: 'The colour and text styles of a design system file.', params: fileKey, sideEffect: 'none' },
    {
      name: 'get_variables',
      description: 'Design tokens (variables) of a Figma file: colours, spacing, modes.',
      params: fileKey,
      sideEffect: 'none',
    },
  ],
}
