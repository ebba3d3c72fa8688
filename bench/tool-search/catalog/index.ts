/** Every namespace of the evaluation registry, in the order they are written out. */
import { asana, bamboohr, confluence, dropbox, gcal, gdrive, notion, trello } from './work.ts'
import { docusign, hubspot, quickbooks, salesforce, shopify, stripe, zendesk } from './business.ts'
import { cloudflare, cloudwatch, datadog, ec2, grafana, k8s, lambda, okta, pagerduty, terraform, vault, vercel } from './cloud.ts'
import { bitbucket, circleci, github, gitlab, jenkins, jira, linear, npm, sentry } from './code.ts'
import { discord, gmail, intercom, msteams, outlook, sendgrid, slack, twilio, zoom } from './comms.ts'
import { airtable, bigquery, elasticsearch, gsheets, mongodb, mysql, postgres, redis, s3, snowflake } from './data.ts'
import { browser, docker, fs, git, shell, web } from './local.ts'
import { calendly, figma, ganalytics, mailchimp, mixpanel, posthog, typeform } from './analytics.ts'
import { cloudrun, gce, gcs, huggingface, openai, pypi, python, sqlite } from './platforms.ts'
import type { NamespaceSpec } from './spec.ts'

export const Namespaces: NamespaceSpec[] = [
  github, gitlab, bitbucket, jira, linear, sentry, circleci, jenkins, npm,
  fs, git, shell, docker, browser, web,
  slack, msteams, discord, gmail, outlook, zoom, twilio, sendgrid, intercom,
  postgres, mysql, mongodb, redis, elasticsearch, bigquery, snowflake, airtable, gsheets, s3,
  k8s, ec2, lambda, cloudwatch, cloudflare, terraform, vercel, datadog, pagerduty, grafana, vault, okta,
  stripe, shopify, salesforce, hubspot, zendesk, quickbooks, docusign,
  asana, trello, notion, confluence, gcal, gdrive, dropbox, bamboohr,
  mixpanel, posthog, ganalytics, mailchimp, calendly, typeform, figma,
  gcs, gce, cloudrun, openai, huggingface, sqlite, python, pypi,
]
