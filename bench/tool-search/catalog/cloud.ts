/** Infrastructure and operations: Kubernetes, AWS, Cloudflare, Terraform, Vercel, Datadog, PagerDuty, Grafana, Vault, Okta. */
import { bool, int, list, num, obj, oneOf, str, type NamespaceSpec } from './spec.ts'

const ns = { namespace: str('Kubernetes namespace, default "default".') }
const named = (what: string) => ({ 'name!': str(`${what} name.`), ...ns })
export const k8s: NamespaceSpec = {
  ns: 'k8s',
  product: 'Kubernetes',
  tags: ['kubernetes', 'containers', 'cluster'],
  writes: 'external',
  resources: [
    {
      name: 'pod',
      ops: ['list', 'get', 'delete'],
      id: named('Pod'),
      filters: {
        ...ns,
        label_selector: str('Label selector, e.g. app=web.'),
        field_selector: str('Field selector, e.g. status.phase=Running.'),
      },
    },
    {
      name: 'deployment',
      ops: ['list', 'get', 'create', 'delete'],
      id: named('Deployment'),
      fields: { 'manifest!': obj('Deployment manifest.') },
      filters: ns,
    },
    { name: 'service', ops: ['list', 'get'], id: named('Service'), filters: ns },
    {
      name: 'configmap',
      ops: ['list', 'get', 'create', 'update'],
      id: named('ConfigMap'),
      fields: { 'data!': obj('Keys and values.') },
      filters: ns,
      label: 'config map',
    },
    {
      name: 'secret',
      ops: ['list', 'get', 'create'],
      id: named('Secret'),
      fields: { 'data!': obj('Keys and values (base64 encoded on write).') },
      filters: ns,
    },
    {
      name: 'namespace',
      ops: ['list', 'create', 'delete'],
      id: { 'name!': str('Namespace name.') },
      fields: { 'name!': str('Namespace name.') },
    },
    { name: 'node', ops: ['list', 'get'], id: { 'name!': str('Node name.') } },
    { name: 'ingress', plural: 'ingresses', ops: ['list', 'get'], id: named('Ingress'), filters: ns },
    { name: 'cronjob', ops: ['list', 'get'], id: named('CronJob'), filters: ns, label: 'cron job' },
  ],
  tools: [
    {
      name: 'get_pod_logs',
      description: "Read the logs of a pod's container, optionally of its previous (crashed) instance.",
      params: {
        ...named('Pod'),
        container: str('Container.'),
        tail_lines: int('Last lines.'),
        previous: bool('Logs of the previous instance.'),
      },
      sideEffect: 'none',
    },
    {
      name: 'scale_deployment',
      description: 'Change the number of replicas of a deployment.',
      params: { ...named('Deployment'), 'replicas!': int('Replicas.') },
    },
    { name: 'rollout_restart', description: 'Restart all pods of a deployment with a rolling restart.', params: named('Deployment') },
    {
      name: 'rollout_undo',
      description: 'Roll a deployment back to its previous revision.',
      params: { ...named('Deployment'), to_revision: int('Revision.') },
    },
    {
      name: 'rollout_status',
      description: 'Watch the progress of a deployment rollout until it completes or fails.',
      params: named('Deployment'),
      sideEffect: 'none',
    },
    {
      name: 'set_image',
      description: 'Update the container image of a deployment, starting a rollout.',
      params: { ...named('Deployment'), 'container!': str('Container.'), 'image!': str('New image.') },
    },
    {
      name: 'apply_manifest',
      description: 'Apply a YAML manifest to the cluster (create or update resources).',
      params: { 'yaml!': str('Manifest.'), ...ns, dry_run: bool('Server-side dry run.') },
    },
    {
      name: 'exec_in_pod',
      description: "Run a command in a pod's container.",
      params: { ...named('Pod'), 'command!': list('Command.'), container: str('Container.') },
    },
    {
      name: 'list_events',
      description: 'Cluster events (scheduling failures, image pull errors, OOM kills), newest first.',
      params: { ...ns, involved_object: str('Only about this object.') },
      sideEffect: 'none',
    },
    { name: 'top_pods', description: 'CPU and memory use of pods.', params: ns, sideEffect: 'none' },
    { name: 'top_nodes', description: 'CPU and memory use of nodes.', params: {}, sideEffect: 'none' },
    {
      name: 'cordon_node',
      description: 'Mark a node unschedulable, and optionally drain its pods for maintenance.',
      params: { 'name!': str('Node.'), drain: bool('Evict its pods too.') },
    },
    {
      name: 'port_forward',
      description: 'Forward a local port to a port of a pod or service.',
      params: { 'target!': str('pod/name or svc/name.'), 'ports!': str('local:remote.'), ...ns },
      sideEffect: 'local',
    },
    {
      name: 'trigger_cronjob',
      description: 'Create a job from a cron job now, without waiting for its schedule.',
      params: named('CronJob'),
    },
    {
      name: 'describe_resource',
      description: 'Detailed description of any resource with its recent events, like kubectl describe.',
      params: { 'kind!': str('Kind, e.g. pod.'), 'name!': str('Name.'), ...ns },
      sideEffect: 'none',
    },
    { name: 'list_contexts', description: 'List kubeconfig contexts and show the current one.', params: {}, sideEffect: 'none' },
  ],
}

const region = { region: str('AWS region, e.g. eu-west-1.') }
const instance = { 'instance_id!': str('Instance id.'), ...region }
export const ec2: NamespaceSpec = {
  ns: 'ec2',
  product: 'Amazon EC2',
  tags: ['aws', 'compute'],
  writes: 'external',
  resources: [
    {
      name: 'instance',
      ops: ['list', 'get'],
      id: instance,
      filters: { ...region, state: oneOf(['pending', 'running', 'stopped', 'terminated'], 'State.'), tag: str('Tag filter key=value.') },
      about: 'Instances are virtual machines.',
    },
    {
      name: 'security_group',
      ops: ['list', 'get', 'create'],
      id: { 'group_id!': str('Group id.'), ...region },
      fields: { 'name!': str('Name.'), 'vpc_id!': str('VPC.'), description: str('Description.') },
      filters: region,
    },
    {
      name: 'volume',
      ops: ['list', 'create', 'delete'],
      id: { 'volume_id!': str('Volume id.'), ...region },
      fields: { 'size_gb!': int('Size.'), 'availability_zone!': str('Zone.'), type: oneOf(['gp3', 'io2', 'st1'], 'Type.') },
      label: 'EBS volume',
    },
    {
      name: 'snapshot',
      ops: ['list', 'create', 'delete'],
      id: { 'snapshot_id!': str('Snapshot id.'), ...region },
      fields: { 'volume_id!': str('Volume to snapshot.'), description: str('Description.') },
    },
  ],
  tools: [
    { name: 'start_instances', description: 'Start stopped EC2 instances.', params: { 'instance_ids!': list('Instance ids.'), ...region } },
    {
      name: 'stop_instances',
      description: 'Stop running EC2 instances.',
      params: { 'instance_ids!': list('Instance ids.'), ...region, hibernate: bool('Hibernate.') },
    },
    { name: 'reboot_instances', description: 'Reboot EC2 instances.', params: { 'instance_ids!': list('Instance ids.'), ...region } },
    {
      name: 'terminate_instances',
      description: 'Terminate EC2 instances for good.',
      params: { 'instance_ids!': list('Instance ids.'), ...region },
    },
    {
      name: 'run_instances',
      description: 'Launch new EC2 instances from an AMI.',
      params: {
        'image_id!': str('AMI.'),
        'instance_type!': str('e.g. t3.micro.'),
        count: int('How many.'),
        key_name: str('SSH key pair.'),
        ...region,
      },
    },
    {
      name: 'authorize_ingress',
      description: 'Open a port in a security group to an IP range.',
      params: {
        'group_id!': str('Group.'),
        'port!': int('Port.'),
        'cidr!': str('CIDR, e.g. 10.0.0.0/16.'),
        protocol: oneOf(['tcp', 'udp'], 'Protocol.'),
      },
    },
    {
      name: 'get_console_output',
      description: 'The serial console output of an instance, to debug boot problems.',
      params: instance,
      sideEffect: 'none',
    },
    {
      name: 'modify_instance_type',
      description: 'Resize a stopped instance to another instance type.',
      params: { ...instance, 'instance_type!': str('New type.') },
    },
  ],
}

const fn = { 'function_name!': str('Function name or ARN.'), ...region }
export const lambda: NamespaceSpec = {
  ns: 'lambda',
  product: 'AWS Lambda',
  tags: ['aws', 'serverless'],
  writes: 'external',
  resources: [
    {
      name: 'function',
      ops: ['list', 'get', 'delete'],
      id: fn,
      filters: region,
      about: 'A Lambda function is code run on demand without servers.',
    },
    {
      name: 'alias',
      plural: 'aliases',
      ops: ['list', 'create'],
      parent: fn,
      id: { 'alias!': str('Alias name.') },
      fields: { 'alias!': str('Alias.'), 'version!': str('Version it points to.') },
    },
  ],
  tools: [
    {
      name: 'invoke_function',
      description: 'Invoke a Lambda function with a JSON payload and return its response.',
      params: { ...fn, payload: obj('Event.'), async: bool('Fire and forget.') },
    },
    {
      name: 'update_function_code',
      description: 'Deploy new code to a Lambda function from a zip or an image.',
      params: { ...fn, zip_file: str('Path to zip.'), image_uri: str('Container image.') },
    },
    {
      name: 'update_function_configuration',
      description: "Change a Lambda function's memory, timeout or environment variables.",
      params: { ...fn, memory_mb: int('Memory.'), timeout_s: int('Timeout.'), environment: obj('Environment variables.') },
    },
    { name: 'publish_version', description: 'Publish the current code of a function as a new immutable version.', params: fn },
    {
      name: 'get_function_logs',
      description: 'Recent CloudWatch log lines of a Lambda function.',
      params: { ...fn, since: str('e.g. 1h.'), filter: str('Filter pattern.') },
      sideEffect: 'none',
    },
    {
      name: 'put_concurrency',
      description: 'Reserve or limit the concurrent executions of a function.',
      params: { ...fn, 'reserved!': int('Reserved concurrency.') },
    },
  ],
}

export const cloudwatch: NamespaceSpec = {
  ns: 'cloudwatch',
  product: 'Amazon CloudWatch',
  tags: ['aws', 'monitoring', 'logs'],
  writes: 'external',
  resources: [
    {
      name: 'alarm',
      ops: ['list', 'delete'],
      id: { 'alarm_name!': str('Alarm name.'), ...region },
      filters: { ...region, state: oneOf(['OK', 'ALARM', 'INSUFFICIENT_DATA'], 'State.') },
    },
    { name: 'dashboard', ops: ['list', 'get'], id: { 'name!': str('Dashboard.') } },
    {
      name: 'log_group',
      ops: ['list', 'create', 'delete'],
      id: { 'log_group!': str('Log group name.'), ...region },
      fields: { 'log_group!': str('Name.'), retention_days: int('Retention.') },
    },
  ],
  tools: [
    {
      name: 'get_metric_data',
      description: 'Fetch datapoints of a metric (CPUUtilization, Latency...) over a time range.',
      params: {
        'namespace!': str('e.g. AWS/EC2.'),
        'metric!': str('Metric name.'),
        dimensions: obj('Dimensions.'),
        'start!': str('ISO.'),
        end: str('ISO.'),
        period_s: int('Period.'),
        stat: oneOf(['Average', 'Sum', 'Maximum', 'p99'], 'Statistic.'),
      },
      sideEffect: 'none',
    },
    {
      name: 'put_metric_alarm',
      description: 'Create or update an alarm on a metric threshold, with notification actions.',
      params: {
        'alarm_name!': str('Name.'),
        'metric!': str('Metric.'),
        'namespace!': str('Namespace.'),
        'threshold!': num('Threshold.'),
        'comparison!': str('e.g. GreaterThanThreshold.'),
        actions: list('SNS topics.'),
      },
    },
    {
      name: 'logs_insights_query',
      description: 'Run a CloudWatch Logs Insights query over log groups and return matching log lines.',
      params: { 'log_groups!': list('Log groups.'), 'query!': str('Insights query.'), 'start!': str('ISO.'), end: str('ISO.') },
      sideEffect: 'none',
    },
    {
      name: 'filter_log_events',
      description: 'Search a log group for lines matching a filter pattern.',
      params: { 'log_group!': str('Log group.'), pattern: str('Filter pattern.'), start: str('ISO.') },
      sideEffect: 'none',
    },
    {
      name: 'set_alarm_state',
      description: 'Force an alarm into a state, to test its actions.',
      params: { 'alarm_name!': str('Alarm.'), 'state!': oneOf(['OK', 'ALARM'], 'State.'), 'reason!': str('Why.') },
    },
  ],
}

const zone = { 'zone_id!': str('Zone id.') }
export const cloudflare: NamespaceSpec = {
  ns: 'cloudflare',
  product: 'Cloudflare',
  tags: ['dns', 'cdn', 'network'],
  writes: 'external',
  resources: [
    { name: 'zone', ops: ['list', 'get'], id: zone, about: 'A zone is a domain managed by Cloudflare.' },
    {
      name: 'dns_record',
      ops: ['list', 'create', 'update', 'delete'],
      parent: zone,
      id: { 'record_id!': str('Record id.') },
      fields: {
        'type!': oneOf(['A', 'AAAA', 'CNAME', 'TXT', 'MX'], 'Record type.'),
        'name!': str('Host name.'),
        'content!': str('Value.'),
        proxied: bool('Through Cloudflare.'),
        ttl: int('TTL.'),
      },
      filters: { name: str('Host name.'), type: str('Type.') },
      label: 'DNS record',
    },
    { name: 'worker', ops: ['list', 'get', 'delete'], id: { 'script_name!': str('Worker script.') } },
    {
      name: 'firewall_rule',
      ops: ['list', 'create', 'delete'],
      parent: zone,
      id: { 'rule_id!': str('Rule id.') },
      fields: {
        'expression!': str('Rule expression.'),
        'action!': oneOf(['block', 'challenge', 'allow', 'log'], 'Action.'),
        description: str('Description.'),
      },
    },
  ],
  tools: [
    {
      name: 'purge_cache',
      description: "Purge cached files from Cloudflare's edge, all or by URL.",
      params: { ...zone, files: list('URLs; everything if unset.') },
    },
    {
      name: 'deploy_worker',
      description: 'Upload and deploy a Cloudflare Worker script.',
      params: { 'script_name!': str('Name.'), 'code!': str('JavaScript module.') },
    },
    {
      name: 'get_analytics',
      description: 'Traffic analytics of a zone: requests, bandwidth, threats, cache ratio.',
      params: { ...zone, since: str('ISO.') },
      sideEffect: 'none',
    },
    {
      name: 'set_security_level',
      description: 'Set a zone\'s security level, e.g. "under attack" mode.',
      params: { ...zone, 'level!': oneOf(['essentially_off', 'low', 'medium', 'high', 'under_attack'], 'Level.') },
    },
    {
      name: 'kv_put',
      description: 'Write a value into a Workers KV namespace.',
      params: { 'namespace_id!': str('KV namespace.'), 'key!': str('Key.'), 'value!': str('Value.') },
    },
  ],
}

const workspaceTf = { 'workspace!': str('Workspace name.') }
export const terraform: NamespaceSpec = {
  ns: 'terraform',
  product: 'Terraform',
  tags: ['iac', 'infrastructure'],
  writes: 'external',
  resources: [
    {
      name: 'workspace',
      ops: ['list', 'get', 'create'],
      id: workspaceTf,
      fields: { 'name!': str('Name.'), working_directory: str('Directory of the configuration.') },
    },
    {
      name: 'variable',
      ops: ['list', 'create', 'update', 'delete'],
      parent: workspaceTf,
      id: { 'variable_id!': str('Variable id.') },
      fields: { 'key!': str('Name.'), 'value!': str('Value.'), sensitive: bool('Hide the value.') },
    },
  ],
  tools: [
    {
      name: 'plan',
      description: 'Run terraform plan: show which resources would be created, changed or destroyed.',
      params: { ...workspaceTf, targets: list('Only these resources.') },
      sideEffect: 'none',
    },
    {
      name: 'apply',
      description: 'Run terraform apply to make the infrastructure match the configuration.',
      params: { ...workspaceTf, plan_id: str('Apply this saved plan.') },
    },
    { name: 'destroy', description: 'Destroy every resource a Terraform workspace manages.', params: workspaceTf },
    {
      name: 'show_state',
      description: "List the resources in a workspace's Terraform state, or show one.",
      params: { ...workspaceTf, address: str('Resource address.') },
      sideEffect: 'none',
    },
    {
      name: 'validate',
      description: 'Check that a Terraform configuration is syntactically valid and consistent.',
      params: { 'directory!': str('Configuration directory.') },
      sideEffect: 'none',
    },
    {
      name: 'import_resource',
      description: 'Bring an existing cloud resource under Terraform management.',
      params: { ...workspaceTf, 'address!': str('Resource address.'), 'id!': str('Provider id.') },
    },
    {
      name: 'unlock_state',
      description: "Release a stuck lock on a workspace's state.",
      params: { ...workspaceTf, 'lock_id!': str('Lock id.') },
    },
  ],
}

const project = { 'project!': str('Project name or id.') }
export const vercel: NamespaceSpec = {
  ns: 'vercel',
  product: 'Vercel',
  tags: ['hosting', 'deploy', 'frontend'],
  writes: 'external',
  resources: [
    {
      name: 'project',
      ops: ['list', 'get', 'create'],
      id: project,
      fields: { 'name!': str('Name.'), framework: str('e.g. nextjs.'), git_repository: str('Repository to deploy.') },
    },
    {
      name: 'deployment',
      ops: ['list', 'get', 'create', 'delete'],
      id: { 'deployment_id!': str('Deployment id or URL.') },
      fields: { ...project, target: oneOf(['production', 'preview'], 'Target.'), ref: str('Git ref.') },
      filters: { project: str('Project.'), state: oneOf(['BUILDING', 'READY', 'ERROR', 'CANCELED'], 'State.') },
    },
    {
      name: 'env_var',
      ops: ['list', 'create', 'delete'],
      parent: project,
      id: { 'env_id!': str('Variable id.') },
      fields: { 'key!': str('Name.'), 'value!': str('Value.'), target: list('production, preview, development.') },
      label: 'environment variable',
    },
    {
      name: 'domain',
      ops: ['list', 'create', 'delete'],
      parent: project,
      id: { 'domain!': str('Domain.') },
      fields: { 'domain!': str('Domain to add.') },
    },
  ],
  tools: [
    {
      name: 'get_build_logs',
      description: 'Build output of a Vercel deployment, to see why a build failed.',
      params: { 'deployment_id!': str('Deployment.') },
      sideEffect: 'none',
    },
    {
      name: 'promote_deployment',
      description: 'Promote a preview deployment to production.',
      params: { ...project, 'deployment_id!': str('Deployment.') },
    },
    {
      name: 'rollback_deployment',
      description: 'Instantly roll production back to an earlier deployment.',
      params: { ...project, 'deployment_id!': str('Earlier deployment.') },
    },
    {
      name: 'get_runtime_logs',
      description: 'Runtime logs of serverless functions of a deployment.',
      params: { 'deployment_id!': str('Deployment.'), since: str('ISO.') },
      sideEffect: 'none',
    },
  ],
}

export const datadog: NamespaceSpec = {
  ns: 'datadog',
  product: 'Datadog',
  tags: ['monitoring', 'observability'],
  writes: 'external',
  resources: [
    {
      name: 'monitor',
      ops: ['list', 'get', 'create', 'update', 'delete'],
      id: { 'monitor_id!': int('Monitor id.') },
      fields: {
        'name!': str('Name.'),
        'query!': str('Monitor query.'),
        'message!': str('Notification message with @handles.'),
        type: str('e.g. metric alert.'),
      },
      filters: { tags: list('Tags.'), status: oneOf(['Alert', 'Warn', 'OK', 'No Data'], 'Status.') },
      about: 'Monitors alert when a metric or log query crosses a threshold.',
    },
    {
      name: 'dashboard',
      ops: ['list', 'get', 'create'],
      id: { 'dashboard_id!': str('Dashboard id.') },
      fields: { 'title!': str('Title.'), 'widgets!': list('Widgets.', 'object') },
    },
    {
      name: 'incident',
      ops: ['list', 'get', 'create', 'update'],
      id: { 'incident_id!': str('Incident id.') },
      fields: {
        'title!': str('Title.'),
        severity: oneOf(['SEV-1', 'SEV-2', 'SEV-3', 'SEV-4'], 'Severity.'),
        commander: str('Incident commander.'),
      },
    },
  ],
  tools: [
    {
      name: 'query_metrics',
      description: 'Query timeseries of Datadog metrics, e.g. avg:system.cpu.user{service:web}.',
      params: { 'query!': str('Metric query.'), 'from!': str('ISO.'), to: str('ISO.') },
      sideEffect: 'none',
    },
    {
      name: 'search_logs',
      description: 'Search Datadog logs with a query like service:api status:error.',
      params: { 'query!': str('Log query.'), from: str('ISO.'), to: str('ISO.'), limit: int('How many.') },
      sideEffect: 'none',
    },
    {
      name: 'search_traces',
      description: 'Search APM traces and spans, e.g. slow requests of a service.',
      params: { 'query!': str('Span query.'), from: str('ISO.') },
      sideEffect: 'none',
    },
    {
      name: 'mute_monitor',
      description: "Silence a monitor's notifications until a time.",
      params: { 'monitor_id!': int('Monitor.'), end: str('ISO end.'), scope: str('Only this scope.') },
    },
    {
      name: 'create_downtime',
      description: 'Schedule a downtime that mutes monitors during maintenance.',
      params: { 'scope!': str('Scope, e.g. env:prod.'), 'start!': str('ISO.'), 'end!': str('ISO.'), message: str('Why.') },
    },
    {
      name: 'list_hosts',
      description: 'Hosts reporting to Datadog, with their metrics and tags.',
      params: { filter: str('Filter.') },
      sideEffect: 'none',
    },
    {
      name: 'post_event',
      description: 'Post an event (a deploy, a config change) onto the Datadog event stream.',
      params: { 'title!': str('Title.'), text: str('Text.'), tags: list('Tags.') },
    },
    {
      name: 'list_slos',
      description: 'Service level objectives with their status and remaining error budget.',
      params: { query: str('Filter.') },
      sideEffect: 'none',
    },
  ],
}

const incident = { 'incident_id!': str('Incident id.') }
export const pagerduty: NamespaceSpec = {
  ns: 'pagerduty',
  product: 'PagerDuty',
  tags: ['incidents', 'on-call'],
  writes: 'external',
  resources: [
    {
      name: 'incident',
      ops: ['list', 'get', 'create', 'update'],
      id: incident,
      fields: {
        'title!': str('Title.'),
        'service_id!': str('Service.'),
        urgency: oneOf(['high', 'low'], 'Urgency.'),
        body: str('Details.'),
      },
      filters: { statuses: list('triggered, acknowledged, resolved.'), service_ids: list('Services.') },
    },
    { name: 'service', ops: ['list', 'get'], id: { 'service_id!': str('Service id.') } },
    { name: 'schedule', ops: ['list', 'get'], id: { 'schedule_id!': str('Schedule id.') }, about: 'Schedules say who is on call when.' },
    { name: 'escalation_policy', plural: 'escalation_policies', ops: ['list', 'get'], id: { 'policy_id!': str('Policy id.') } },
  ],
  tools: [
    { name: 'acknowledge_incident', description: 'Acknowledge a PagerDuty incident so it stops escalating.', params: incident },
    {
      name: 'resolve_incident',
      description: 'Resolve a PagerDuty incident.',
      params: { ...incident, resolution: str('Resolution note.') },
    },
    {
      name: 'reassign_incident',
      description: 'Reassign an incident to another responder or escalation policy.',
      params: { ...incident, user_id: str('Responder.'), escalation_policy_id: str('Policy.') },
    },
    { name: 'add_incident_note', description: "Add a note to an incident's timeline.", params: { ...incident, 'content!': str('Note.') } },
    {
      name: 'list_oncalls',
      description: 'Who is on call right now, per schedule and escalation level.',
      params: { schedule_ids: list('Schedules.'), since: str('ISO.') },
      sideEffect: 'none',
    },
    {
      name: 'create_override',
      description: 'Put someone on call in place of the scheduled person for a time window.',
      params: { 'schedule_id!': str('Schedule.'), 'user_id!': str('Who covers.'), 'start!': str('ISO.'), 'end!': str('ISO.') },
    },
    {
      name: 'send_event',
      description: 'Send an alert event to PagerDuty (Events API) to trigger an incident.',
      params: {
        'routing_key!': str('Integration key.'),
        'summary!': str('Summary.'),
        severity: oneOf(['critical', 'error', 'warning', 'info'], 'Severity.'),
      },
    },
  ],
}

export const grafana: NamespaceSpec = {
  ns: 'grafana',
  product: 'Grafana',
  tags: ['monitoring', 'dashboards'],
  writes: 'external',
  resources: [
    {
      name: 'dashboard',
      ops: ['get', 'create', 'delete', 'search'],
      id: { 'uid!': str('Dashboard uid.') },
      fields: { 'dashboard!': obj('Dashboard JSON.'), folder_uid: str('Folder.') },
    },
    { name: 'datasource', ops: ['list', 'get'], id: { 'uid!': str('Datasource uid.') } },
    {
      name: 'alert_rule',
      ops: ['list', 'get', 'create'],
      id: { 'uid!': str('Rule uid.') },
      fields: { 'title!': str('Title.'), 'condition!': str('Condition.'), 'folder_uid!': str('Folder.') },
    },
  ],
  tools: [
    {
      name: 'query_prometheus',
      description: 'Run a PromQL query through a Grafana Prometheus datasource.',
      params: { 'datasource_uid!': str('Datasource.'), 'expr!': str('PromQL.'), start: str('ISO.'), end: str('ISO.'), step: str('Step.') },
      sideEffect: 'none',
    },
    {
      name: 'query_loki',
      description: 'Run a LogQL query over logs in Loki through Grafana.',
      params: { 'datasource_uid!': str('Datasource.'), 'query!': str('LogQL.'), limit: int('Lines.') },
      sideEffect: 'none',
    },
    {
      name: 'create_annotation',
      description: 'Annotate dashboards at a point in time, e.g. to mark a deploy.',
      params: { 'text!': str('Text.'), time: str('ISO.'), tags: list('Tags.') },
    },
    {
      name: 'render_panel',
      description: 'Render a dashboard panel to a PNG image.',
      params: { 'dashboard_uid!': str('Dashboard.'), 'panel_id!': int('Panel.') },
      sideEffect: 'none',
    },
  ],
}

const secretPath = { 'path!': str('Secret path, e.g. secret/data/app.') }
export const vault: NamespaceSpec = {
  ns: 'vault',
  product: 'HashiCorp Vault',
  tags: ['secrets', 'security'],
  writes: 'external',
  resources: [
    {
      name: 'policy',
      plural: 'policies',
      ops: ['list', 'get', 'create'],
      id: { 'name!': str('Policy name.') },
      fields: { 'name!': str('Name.'), 'rules!': str('HCL rules.') },
    },
  ],
  tools: [
    {
      name: 'read_secret',
      description: "Read a secret from Vault's key/value store.",
      params: { ...secretPath, version: int('Version.') },
      sideEffect: 'none',
    },
    {
      name: 'write_secret',
      description: 'Store a secret (key/value pairs) in Vault, creating a new version.',
      params: { ...secretPath, 'data!': obj('Keys and values.') },
    },
    { name: 'list_secrets', description: 'List secret names under a path in Vault.', params: secretPath, sideEffect: 'none' },
    { name: 'delete_secret', description: 'Delete the latest version of a secret.', params: secretPath },
    {
      name: 'create_token',
      description: 'Create a Vault token with policies and a time to live.',
      params: { policies: list('Policies.'), ttl: str('e.g. 1h.') },
    },
    { name: 'revoke_token', description: 'Revoke a Vault token and its children.', params: { 'accessor!': str('Token accessor.') } },
    {
      name: 'generate_database_credentials',
      description: 'Get short-lived database credentials from a Vault database role.',
      params: { 'role!': str('Role.') },
    },
    {
      name: 'encrypt',
      description: 'Encrypt data with a Vault transit key, without storing it.',
      params: { 'key!': str('Transit key.'), 'plaintext!': str('Data.') },
      sideEffect: 'none',
    },
  ],
}

const userId = { 'user_id!': str('User id or login.') }
export const okta: NamespaceSpec = {
  ns: 'okta',
  product: 'Okta',
  tags: ['identity', 'security', 'sso'],
  writes: 'external',
  resources: [
    {
      name: 'user',
      ops: ['list', 'get', 'create', 'update'],
      id: userId,
      fields: {
        'email!': str('Email / login.'),
        first_name: str('First name.'),
        last_name: str('Last name.'),
        department: str('Department.'),
      },
      filters: { search: str('SCIM filter.'), status: oneOf(['ACTIVE', 'SUSPENDED', 'DEPROVISIONED'], 'Status.') },
    },
    {
      name: 'group',
      ops: ['list', 'get', 'create'],
      id: { 'group_id!': str('Group id.') },
      fields: { 'name!': str('Name.'), description: str('Description.') },
    },
    { name: 'application', ops: ['list', 'get'], id: { 'app_id!': str('App id.') } },
  ],
  tools: [
    { name: 'suspend_user', description: 'Suspend an Okta user so they cannot sign in.', params: userId },
    { name: 'deactivate_user', description: 'Deactivate (offboard) a user and remove their app access.', params: userId },
    {
      name: 'reset_password',
      description: 'Send a password reset link to a user.',
      params: { ...userId, send_email: bool('Email it to them.') },
    },
    { name: 'reset_mfa_factors', description: "Remove a user's enrolled MFA factors so they can enrol again.", params: userId },
    { name: 'add_user_to_group', description: 'Add a user to an Okta group.', params: { ...userId, 'group_id!': str('Group.') } },
    { name: 'assign_user_to_app', description: 'Give a user access to an application.', params: { ...userId, 'app_id!': str('App.') } },
    { name: 'list_user_groups', description: 'The groups a user belongs to.', params: userId, sideEffect: 'none' },
    {
      name: 'get_system_log',
      description: 'Okta system log events: sign-ins, failures, admin changes.',
      params: { filter: str('Filter expression.'), since: str('ISO.') },
      sideEffect: 'none',
    },
  ],
}
