/** Google Cloud, AI model APIs, and local runtimes: GCS, Compute Engine, Cloud Run, OpenAI, Hugging Face, SQLite, Python, PyPI. */
import { bool, int, list, num, obj, oneOf, str, type NamespaceSpec } from './spec.ts'

const bucket = { 'bucket!': str('Bucket.') }
export const gcs: NamespaceSpec = {
  ns: 'gcs',
  product: 'Google Cloud Storage',
  tags: ['gcp', 'storage'],
  writes: 'external',
  resources: [
    {
      name: 'bucket',
      ops: ['list', 'create', 'delete'],
      id: bucket,
      fields: {
        'bucket!': str('Name.'),
        location: str('Location.'),
        storage_class: oneOf(['STANDARD', 'NEARLINE', 'COLDLINE', 'ARCHIVE'], 'Class.'),
      },
    },
  ],
  tools: [
    {
      name: 'list_objects',
      description: 'List objects in a Cloud Storage bucket by prefix.',
      params: { ...bucket, prefix: str('Prefix.') },
      sideEffect: 'none',
    },
    {
      name: 'download_object',
      description: 'Download an object from Cloud Storage.',
      params: { ...bucket, 'object!': str('Object name.') },
      sideEffect: 'none',
    },
    {
      name: 'upload_object',
      description: 'Upload content to a Cloud Storage bucket.',
      params: { ...bucket, 'object!': str('Object name.'), 'content!': str('Content.') },
    },
    {
      name: 'signed_url',
      description: 'A time-limited URL to read an object without Google credentials.',
      params: { ...bucket, 'object!': str('Object.'), expires_minutes: int('Validity.') },
      sideEffect: 'none',
    },
  ],
}

const zone = { 'project!': str('Project.'), 'zone!': str('Zone, e.g. europe-west1-b.') }
export const gce: NamespaceSpec = {
  ns: 'gce',
  product: 'Compute Engine',
  tags: ['gcp', 'compute'],
  writes: 'external',
  resources: [
    {
      name: 'instance',
      ops: ['list', 'get', 'create', 'delete'],
      parent: zone,
      id: { 'instance!': str('VM name.') },
      fields: { 'name!': str('Name.'), 'machine_type!': str('e.g. e2-medium.'), image: str('Boot image.') },
      label: 'VM instance',
    },
  ],
  tools: [
    { name: 'start_instance', description: 'Start a stopped Compute Engine VM.', params: { ...zone, 'instance!': str('VM.') } },
    { name: 'stop_instance', description: 'Stop a Compute Engine VM.', params: { ...zone, 'instance!': str('VM.') } },
    {
      name: 'get_serial_port_output',
      description: 'Boot and kernel log of a VM from its serial port.',
      params: { ...zone, 'instance!': str('VM.') },
      sideEffect: 'none',
    },
    {
      name: 'ssh_command',
      description: 'Run a command on a VM over SSH.',
      params: { ...zone, 'instance!': str('VM.'), 'command!': str('Command.') },
    },
  ],
}

const service = { 'project!': str('Project.'), 'region!': str('Region.'), 'service!': str('Service name.') }
export const cloudrun: NamespaceSpec = {
  ns: 'cloudrun',
  product: 'Cloud Run',
  tags: ['gcp', 'serverless', 'containers'],
  writes: 'external',
  resources: [
    { name: 'service', ops: ['list', 'get', 'delete'], id: service, label: 'Cloud Run service' },
    { name: 'revision', ops: ['list'], parent: service, id: { 'revision!': str('Revision.') } },
  ],
  tools: [
    {
      name: 'deploy_service',
      description: 'Deploy a container image to a Cloud Run service, creating a new revision.',
      params: { ...service, 'image!': str('Image.'), env: obj('Environment variables.'), min_instances: int('Minimum instances.') },
    },
    {
      name: 'update_traffic',
      description: 'Split traffic between revisions, e.g. to canary or roll back.',
      params: { ...service, 'traffic!': obj('Revision to percent.') },
    },
    {
      name: 'read_logs',
      description: 'Request and application logs of a Cloud Run service.',
      params: { ...service, severity: str('Minimum severity.'), since: str('ISO.') },
      sideEffect: 'none',
    },
  ],
}

export const openai: NamespaceSpec = {
  ns: 'openai',
  product: 'OpenAI',
  tags: ['ai', 'llm'],
  writes: 'external',
  resources: [
    { name: 'file', ops: ['list', 'delete'], id: { 'file_id!': str('File id.') } },
    {
      name: 'fine_tuning_job',
      ops: ['list', 'get', 'create'],
      id: { 'job_id!': str('Job id.') },
      fields: { 'model!': str('Base model.'), 'training_file!': str('File id.') },
      label: 'fine-tuning job',
    },
  ],
  tools: [
    {
      name: 'chat_completion',
      description: 'Ask an OpenAI model to answer a prompt.',
      params: { 'model!': str('Model.'), 'messages!': list('Messages.', 'object'), temperature: num('Temperature.') },
      sideEffect: 'none',
    },
    {
      name: 'create_embedding',
      description: 'Turn text into an embedding vector for semantic search.',
      params: { 'input!': list('Texts.'), model: str('Embedding model.') },
      sideEffect: 'none',
    },
    {
      name: 'generate_image',
      description: 'Generate an image from a text description.',
      params: { 'prompt!': str('Description.'), size: oneOf(['1024x1024', '1792x1024'], 'Size.') },
    },
    {
      name: 'transcribe_audio',
      description: 'Transcribe speech in an audio file to text.',
      params: { 'file!': str('Audio file.'), language: str('Language.') },
      sideEffect: 'none',
    },
    {
      name: 'moderate_text',
      description: 'Check text for harmful content categories.',
      params: { 'input!': str('Text.') },
      sideEffect: 'none',
    },
    {
      name: 'upload_file',
      description: 'Upload a file for fine-tuning or batch jobs.',
      params: { 'path!': str('Local file.'), 'purpose!': oneOf(['fine-tune', 'batch', 'assistants'], 'Purpose.') },
    },
  ],
}

export const huggingface: NamespaceSpec = {
  ns: 'huggingface',
  product: 'Hugging Face',
  tags: ['ai', 'models', 'datasets'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'search_models',
      description: 'Search the Hugging Face Hub for models by task, library or name.',
      params: { 'query!': str('Text.'), task: str('e.g. text-classification.'), sort: oneOf(['downloads', 'likes', 'updated'], 'Order.') },
      sideEffect: 'none',
    },
    {
      name: 'get_model_card',
      description: 'The model card (README) and metadata of a model on the Hub.',
      params: { 'repo_id!': str('e.g. org/model.') },
      sideEffect: 'none',
    },
    {
      name: 'search_datasets',
      description: 'Search datasets on the Hugging Face Hub.',
      params: { 'query!': str('Text.') },
      sideEffect: 'none',
    },
    {
      name: 'preview_dataset',
      description: 'The first rows of a dataset split.',
      params: { 'repo_id!': str('Dataset.'), split: str('Split.') },
      sideEffect: 'none',
    },
    {
      name: 'run_inference',
      description: 'Run a hosted model on an input through the Inference API.',
      params: { 'repo_id!': str('Model.'), 'inputs!': str('Input.') },
      sideEffect: 'none',
    },
    {
      name: 'list_spaces',
      description: 'Hugging Face Spaces (demo apps) matching a search.',
      params: { query: str('Text.') },
      sideEffect: 'none',
    },
  ],
}

export const sqlite: NamespaceSpec = {
  ns: 'sqlite',
  product: 'SQLite',
  tags: ['database', 'sql', 'local'],
  writes: 'local',
  resources: [],
  tools: [
    {
      name: 'read_query',
      description: 'Run a SELECT on a local SQLite database file.',
      params: { 'db!': str('Database file.'), 'sql!': str('Query.') },
      sideEffect: 'none',
    },
    {
      name: 'write_query',
      description: 'Run an INSERT, UPDATE or DELETE on a local SQLite database.',
      params: { 'db!': str('Database file.'), 'sql!': str('Statement.') },
    },
    { name: 'list_tables', description: 'Tables in a SQLite database file.', params: { 'db!': str('Database file.') }, sideEffect: 'none' },
    {
      name: 'describe_table',
      description: 'Columns of a SQLite table.',
      params: { 'db!': str('Database file.'), 'table!': str('Table.') },
      sideEffect: 'none',
    },
    {
      name: 'import_csv',
      description: 'Load a CSV file into a new SQLite table.',
      params: { 'db!': str('Database file.'), 'csv!': str('CSV file.'), 'table!': str('Table.') },
    },
  ],
}

export const python: NamespaceSpec = {
  ns: 'python',
  product: 'Python',
  tags: ['code', 'local', 'notebook'],
  writes: 'local',
  resources: [],
  tools: [
    {
      name: 'run_code',
      description: 'Execute Python code in a sandbox and return stdout, the last value and any plots.',
      params: { 'code!': str('Python source.'), timeout_s: int('Time limit.') },
    },
    {
      name: 'install_package',
      description: 'pip install a package into the sandbox.',
      params: { 'package!': str('Requirement, e.g. pandas==2.2.') },
    },
    {
      name: 'run_tests',
      description: 'Run pytest in the workspace and report passed and failed tests.',
      params: { path: str('Tests to run.'), keyword: str('-k expression.') },
    },
    {
      name: 'lint',
      description: 'Check Python files for errors and style problems with ruff.',
      params: { path: str('Files.'), fix: bool('Fix what can be fixed.') },
    },
    { name: 'format_code', description: 'Format Python files with black.', params: { 'paths!': list('Files.') } },
    { name: 'type_check', description: 'Type-check Python code with mypy.', params: { path: str('Package or file.') }, sideEffect: 'none' },
    {
      name: 'run_notebook',
      description: 'Execute every cell of a Jupyter notebook and save the outputs.',
      params: { 'path!': str('.ipynb file.') },
    },
  ],
}

export const pypi: NamespaceSpec = {
  ns: 'pypi',
  product: 'PyPI',
  tags: ['packages', 'python'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'get_package',
      description: 'Metadata of a Python package on PyPI: versions, license, requirements.',
      params: { 'name!': str('Package.') },
      sideEffect: 'none',
    },
    {
      name: 'search_packages',
      description: 'Find Python packages on PyPI by keyword.',
      params: { 'query!': str('Keywords.') },
      sideEffect: 'none',
    },
    {
      name: 'check_vulnerabilities',
      description: 'Known vulnerabilities (from OSV) of a Python package version.',
      params: { 'name!': str('Package.'), 'version!': str('Version.') },
      sideEffect: 'none',
    },
  ],
}
