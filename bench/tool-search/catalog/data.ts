/** Databases, warehouses, spreadsheets and object storage. */
import { bool, int, list, obj, oneOf, str, type NamespaceSpec } from './spec.ts'

const schema = { schema: str('Schema, default public.') }
const table = { 'table!': str('Table name.'), ...schema }
export const postgres: NamespaceSpec = {
  ns: 'postgres',
  product: 'PostgreSQL',
  tags: ['database', 'sql'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'query',
      description: 'Run a read-only SQL query against the PostgreSQL database and return the rows.',
      params: { 'sql!': str('A SELECT statement.'), params: list('Bind parameters.') },
      sideEffect: 'none',
    },
    {
      name: 'execute',
      description: 'Run a SQL statement that changes data or schema (INSERT, UPDATE, DELETE, DDL) in a transaction.',
      params: { 'sql!': str('Statement.'), params: list('Bind parameters.') },
    },
    { name: 'list_schemas', description: 'List the schemas of the database.', params: {}, sideEffect: 'none' },
    { name: 'list_tables', description: 'List the tables of a schema with their row estimates.', params: schema, sideEffect: 'none' },
    {
      name: 'describe_table',
      description: 'Columns of a table with types, nullability, defaults, indexes and foreign keys.',
      params: table,
      sideEffect: 'none',
    },
    {
      name: 'explain_query',
      description: 'Show the query plan of a SQL query (EXPLAIN ANALYZE), to find out why it is slow.',
      params: { 'sql!': str('Query.'), analyze: bool('Run it and show real timings.') },
      sideEffect: 'none',
    },
    {
      name: 'list_indexes',
      description: 'List the indexes of a table, their size and how often they are used.',
      params: table,
      sideEffect: 'none',
    },
    {
      name: 'create_index',
      description: 'Create an index on columns of a table, concurrently, without locking writes.',
      params: { ...table, 'columns!': list('Columns.'), unique: bool('Unique index.') },
    },
    {
      name: 'list_active_queries',
      description: 'Queries running right now (pg_stat_activity), with their duration and state.',
      params: { min_duration_ms: int('Only those running longer.') },
      sideEffect: 'none',
    },
    { name: 'cancel_query', description: 'Cancel a running query by its backend pid.', params: { 'pid!': int('Backend pid.') } },
    { name: 'table_sizes', description: 'Disk size of each table and its indexes, largest first.', params: schema, sideEffect: 'none' },
    { name: 'list_locks', description: 'Locks held and awaited, to debug blocked queries.', params: {}, sideEffect: 'none' },
    {
      name: 'run_migration',
      description: 'Apply a SQL migration file and record it in the migrations table.',
      params: { 'name!': str('Migration name.'), 'sql!': str('Migration SQL.') },
    },
  ],
}

export const mysql: NamespaceSpec = {
  ns: 'mysql',
  product: 'MySQL',
  tags: ['database', 'sql'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'query',
      description: 'Run a SELECT on the MySQL database and return rows.',
      params: { 'sql!': str('SELECT statement.') },
      sideEffect: 'none',
    },
    { name: 'execute', description: 'Execute an INSERT, UPDATE, DELETE or DDL statement on MySQL.', params: { 'sql!': str('Statement.') } },
    { name: 'show_databases', description: 'List the databases on the MySQL server.', params: {}, sideEffect: 'none' },
    { name: 'show_tables', description: 'List tables in a MySQL database.', params: { 'database!': str('Database.') }, sideEffect: 'none' },
    {
      name: 'describe_table',
      description: 'Show the columns and keys of a MySQL table.',
      params: { 'database!': str('Database.'), 'table!': str('Table.') },
      sideEffect: 'none',
    },
    {
      name: 'show_processlist',
      description: 'Show the threads running on the MySQL server and what they are doing.',
      params: {},
      sideEffect: 'none',
    },
    {
      name: 'slow_query_log',
      description: 'Read the slowest queries from the MySQL slow query log.',
      params: { limit: int('How many.') },
      sideEffect: 'none',
    },
  ],
}

const collection = { 'database!': str('Database.'), 'collection!': str('Collection.') }
export const mongodb: NamespaceSpec = {
  ns: 'mongodb',
  product: 'MongoDB',
  tags: ['database', 'nosql'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'find',
      description: 'Find documents in a MongoDB collection matching a filter, with projection and sort.',
      params: {
        ...collection,
        filter: obj('Query filter.'),
        projection: obj('Fields.'),
        sort: obj('Sort.'),
        limit: int('Most documents.'),
      },
      sideEffect: 'none',
    },
    {
      name: 'aggregate',
      description: 'Run an aggregation pipeline ($match, $group, $lookup...) on a collection.',
      params: { ...collection, 'pipeline!': list('Stages.', 'object') },
      sideEffect: 'none',
    },
    {
      name: 'count_documents',
      description: 'Count the documents of a collection that match a filter.',
      params: { ...collection, filter: obj('Filter.') },
      sideEffect: 'none',
    },
    {
      name: 'insert_many',
      description: 'Insert documents into a MongoDB collection.',
      params: { ...collection, 'documents!': list('Documents.', 'object') },
    },
    {
      name: 'update_many',
      description: 'Update all documents matching a filter with an update document ($set, $inc...).',
      params: { ...collection, 'filter!': obj('Filter.'), 'update!': obj('Update.'), upsert: bool('Insert if none match.') },
    },
    {
      name: 'delete_many',
      description: 'Delete the documents of a collection that match a filter.',
      params: { ...collection, 'filter!': obj('Filter.') },
    },
    {
      name: 'list_collections',
      description: 'List the collections of a MongoDB database.',
      params: { 'database!': str('Database.') },
      sideEffect: 'none',
    },
    {
      name: 'collection_schema',
      description: 'Infer the schema of a collection from a sample of its documents.',
      params: { ...collection, sample_size: int('Documents to sample.') },
      sideEffect: 'none',
    },
    {
      name: 'create_index',
      description: 'Create an index on fields of a MongoDB collection.',
      params: { ...collection, 'keys!': obj('Fields and directions.'), unique: bool('Unique.') },
    },
    {
      name: 'collection_stats',
      description: 'Storage size, document count and index sizes of a collection.',
      params: collection,
      sideEffect: 'none',
    },
  ],
}

const key = { 'key!': str('Key.') }
export const redis: NamespaceSpec = {
  ns: 'redis',
  product: 'Redis',
  tags: ['cache', 'database'],
  writes: 'external',
  resources: [],
  tools: [
    { name: 'get', description: 'Get the value of a Redis key.', params: key, sideEffect: 'none' },
    {
      name: 'set',
      description: 'Set a Redis key to a value, optionally with an expiry.',
      params: { ...key, 'value!': str('Value.'), ttl_seconds: int('Expire after.') },
    },
    { name: 'delete_keys', description: 'Delete one or more keys.', params: { 'keys!': list('Keys.') } },
    {
      name: 'scan_keys',
      description: 'Find keys matching a pattern without blocking the server (SCAN).',
      params: { 'pattern!': str('Glob, e.g. session:*.'), count: int('Batch size.') },
      sideEffect: 'none',
    },
    { name: 'ttl', description: 'How many seconds until a key expires.', params: key, sideEffect: 'none' },
    { name: 'hgetall', description: 'All fields and values of a Redis hash.', params: key, sideEffect: 'none' },
    {
      name: 'lrange',
      description: 'Elements of a Redis list in a range.',
      params: { ...key, start: int('From.'), stop: int('To.') },
      sideEffect: 'none',
    },
    {
      name: 'publish',
      description: 'Publish a message on a Redis pub/sub channel.',
      params: { 'channel!': str('Channel.'), 'message!': str('Message.') },
    },
    {
      name: 'info',
      description: 'Server statistics: memory use, connected clients, hit rate, replication.',
      params: { section: str('Section, e.g. memory.') },
      sideEffect: 'none',
    },
    {
      name: 'flush_database',
      description: 'Remove every key of the current Redis database.',
      params: { async: bool('Flush in the background.') },
    },
    { name: 'xadd', description: 'Append an entry to a Redis stream.', params: { ...key, 'fields!': obj('Field values.') } },
  ],
}

const esIndex = { 'index!': str('Index name or pattern.') }
export const elasticsearch: NamespaceSpec = {
  ns: 'elasticsearch',
  product: 'Elasticsearch',
  tags: ['search', 'database', 'logs'],
  writes: 'external',
  resources: [
    {
      name: 'index',
      plural: 'indices',
      ops: ['list', 'create', 'delete'],
      id: esIndex,
      fields: { 'index!': str('Index name.'), mappings: obj('Field mappings.'), settings: obj('Shards, replicas...') },
    },
  ],
  tools: [
    {
      name: 'search',
      description: 'Search documents of an Elasticsearch index with the query DSL.',
      params: { ...esIndex, 'query!': obj('Query DSL.'), size: int('Hits.'), sort: list('Sort.', 'object') },
      sideEffect: 'none',
    },
    {
      name: 'esql_query',
      description: 'Run an ES|QL query, e.g. FROM logs-* | WHERE level == "error" | STATS count() BY service.',
      params: { 'query!': str('ES|QL.') },
      sideEffect: 'none',
    },
    { name: 'get_mapping', description: 'The field mappings (types) of an index.', params: esIndex, sideEffect: 'none' },
    {
      name: 'index_document',
      description: 'Add or replace a document in an index.',
      params: { ...esIndex, id: str('Document id.'), 'document!': obj('Document.') },
    },
    {
      name: 'delete_by_query',
      description: 'Delete the documents of an index that match a query.',
      params: { ...esIndex, 'query!': obj('Query DSL.') },
    },
    {
      name: 'cluster_health',
      description: 'Cluster health: green, yellow or red, with unassigned shards.',
      params: {},
      sideEffect: 'none',
    },
    {
      name: 'reindex',
      description: 'Copy documents from one index to another.',
      params: { 'source!': str('Source index.'), 'dest!': str('Destination index.') },
    },
  ],
}

const dataset = { 'project_id!': str('Google Cloud project.'), 'dataset!': str('Dataset.') }
export const bigquery: NamespaceSpec = {
  ns: 'bigquery',
  product: 'BigQuery',
  tags: ['warehouse', 'sql', 'google'],
  writes: 'external',
  resources: [
    {
      name: 'dataset',
      ops: ['list', 'get', 'create'],
      id: dataset,
      fields: { 'dataset!': str('Dataset id.'), location: str('Region, e.g. EU.') },
      filters: { 'project_id!': str('Project.') },
    },
    { name: 'table', ops: ['list', 'get', 'delete'], parent: dataset, id: { 'table!': str('Table.') } },
  ],
  tools: [
    {
      name: 'run_query',
      description: 'Run a GoogleSQL query in BigQuery and return the result rows.',
      params: { 'project_id!': str('Project.'), 'sql!': str('Query.'), dry_run: bool('Only estimate bytes processed.') },
      sideEffect: 'none',
    },
    {
      name: 'estimate_query_cost',
      description: 'Estimate how many bytes a query would scan and what it would cost, without running it.',
      params: { 'project_id!': str('Project.'), 'sql!': str('Query.') },
      sideEffect: 'none',
    },
    {
      name: 'load_table_from_gcs',
      description: 'Load CSV, JSON or Parquet files from Cloud Storage into a table.',
      params: {
        ...dataset,
        'table!': str('Table.'),
        'uri!': str('gs:// URI.'),
        format: oneOf(['CSV', 'NEWLINE_DELIMITED_JSON', 'PARQUET'], 'Format.'),
      },
    },
    {
      name: 'export_table',
      description: 'Export a BigQuery table to files in Cloud Storage.',
      params: { ...dataset, 'table!': str('Table.'), 'destination_uri!': str('gs:// URI.') },
    },
    {
      name: 'list_jobs',
      description: 'List recent BigQuery jobs with their state and bytes billed.',
      params: { 'project_id!': str('Project.'), state: oneOf(['pending', 'running', 'done'], 'State.') },
      sideEffect: 'none',
    },
  ],
}

export const snowflake: NamespaceSpec = {
  ns: 'snowflake',
  product: 'Snowflake',
  tags: ['warehouse', 'sql'],
  writes: 'external',
  resources: [{ name: 'warehouse', ops: ['list'], id: { 'name!': str('Warehouse.') } }],
  tools: [
    {
      name: 'execute_query',
      description: 'Execute a SQL query in Snowflake on a warehouse.',
      params: { 'sql!': str('SQL.'), warehouse: str('Warehouse.'), database: str('Database.') },
    },
    { name: 'list_databases', description: 'List the Snowflake databases you can access.', params: {}, sideEffect: 'none' },
    {
      name: 'describe_table',
      description: 'Columns and types of a Snowflake table.',
      params: { 'table!': str('Fully qualified table.') },
      sideEffect: 'none',
    },
    {
      name: 'query_history',
      description: 'Recent queries with their duration, warehouse and credits used.',
      params: { user: str('Only this user.'), limit: int('How many.') },
      sideEffect: 'none',
    },
    {
      name: 'resize_warehouse',
      description: 'Change the size of a virtual warehouse (XSMALL to 6XLARGE).',
      params: { 'name!': str('Warehouse.'), 'size!': str('New size.') },
    },
    { name: 'suspend_warehouse', description: 'Suspend a warehouse so it stops using credits.', params: { 'name!': str('Warehouse.') } },
  ],
}

const base = { 'base_id!': str('Base id.'), 'table!': str('Table name or id.') }
export const airtable: NamespaceSpec = {
  ns: 'airtable',
  product: 'Airtable',
  tags: ['spreadsheet', 'database', 'no-code'],
  writes: 'external',
  resources: [
    {
      name: 'record',
      ops: ['list', 'get', 'create', 'update', 'delete'],
      parent: base,
      id: { 'record_id!': str('Record id.') },
      fields: { 'fields!': obj('Field names and values.') },
      filters: { formula: str('filterByFormula expression.'), view: str('View name.') },
    },
    { name: 'base', ops: ['list'], id: { 'base_id!': str('Base id.') } },
  ],
  tools: [
    {
      name: 'get_base_schema',
      description: 'Tables, fields and field types of an Airtable base.',
      params: { 'base_id!': str('Base id.') },
      sideEffect: 'none',
    },
    {
      name: 'create_field',
      description: 'Add a field (column) to an Airtable table.',
      params: { ...base, 'name!': str('Field name.'), 'type!': str('Field type, e.g. singleLineText.') },
    },
  ],
}

const sheet = { 'spreadsheet_id!': str('Spreadsheet id.') }
export const gsheets: NamespaceSpec = {
  ns: 'gsheets',
  product: 'Google Sheets',
  tags: ['spreadsheet', 'google'],
  writes: 'external',
  resources: [],
  tools: [
    {
      name: 'read_range',
      description: 'Read the cell values of a range in a Google Sheets spreadsheet, e.g. Sheet1!A1:D20.',
      params: { ...sheet, 'range!': str('A1 range.') },
      sideEffect: 'none',
    },
    {
      name: 'write_range',
      description: 'Write values into a range of cells.',
      params: { ...sheet, 'range!': str('A1 range.'), 'values!': list('Rows of values.', 'array') },
    },
    {
      name: 'append_rows',
      description: "Append rows after the last row of a sheet's table.",
      params: { ...sheet, 'range!': str('Sheet or table range.'), 'values!': list('Rows.', 'array') },
    },
    { name: 'clear_range', description: 'Clear the values of a range of cells.', params: { ...sheet, 'range!': str('A1 range.') } },
    {
      name: 'create_spreadsheet',
      description: 'Create a new Google Sheets spreadsheet.',
      params: { 'title!': str('Title.'), sheets: list('Sheet names.') },
    },
    { name: 'add_sheet', description: 'Add a sheet (tab) to a spreadsheet.', params: { ...sheet, 'title!': str('Tab name.') } },
    { name: 'get_spreadsheet', description: 'Spreadsheet metadata: title, sheets and their sizes.', params: sheet, sideEffect: 'none' },
    {
      name: 'format_cells',
      description: 'Format cells: bold, colours, number format, borders.',
      params: { ...sheet, 'range!': str('A1 range.'), 'format!': obj('Format.') },
    },
  ],
}

const bucket = { 'bucket!': str('Bucket name.') }
export const s3: NamespaceSpec = {
  ns: 's3',
  product: 'Amazon S3',
  tags: ['aws', 'storage'],
  writes: 'external',
  resources: [
    {
      name: 'bucket',
      ops: ['list', 'create', 'delete'],
      id: bucket,
      fields: { 'bucket!': str('Bucket name.'), region: str('AWS region.') },
    },
  ],
  tools: [
    {
      name: 'list_objects',
      description: 'List objects in an S3 bucket under a prefix.',
      params: { ...bucket, prefix: str('Key prefix.'), max_keys: int('How many.') },
      sideEffect: 'none',
    },
    {
      name: 'get_object',
      description: 'Download an object from S3 and return its content.',
      params: { ...bucket, 'key!': str('Object key.') },
      sideEffect: 'none',
    },
    {
      name: 'put_object',
      description: 'Upload content to S3 as an object.',
      params: { ...bucket, 'key!': str('Object key.'), 'content!': str('Content.'), content_type: str('MIME type.') },
    },
    { name: 'delete_object', description: 'Delete an object from an S3 bucket.', params: { ...bucket, 'key!': str('Object key.') } },
    {
      name: 'copy_object',
      description: 'Copy an object within S3, possibly to another bucket.',
      params: {
        'source_bucket!': str('From bucket.'),
        'source_key!': str('From key.'),
        'dest_bucket!': str('To bucket.'),
        'dest_key!': str('To key.'),
      },
    },
    {
      name: 'presign_url',
      description: 'Create a temporary signed URL to download or upload an S3 object without credentials.',
      params: { ...bucket, 'key!': str('Object key.'), expires_seconds: int('Validity.'), method: oneOf(['GET', 'PUT'], 'Method.') },
      sideEffect: 'none',
    },
    { name: 'get_bucket_policy', description: 'Read the access policy of a bucket.', params: bucket, sideEffect: 'none' },
    {
      name: 'set_lifecycle_rules',
      description: 'Set lifecycle rules: expire or archive objects after some days.',
      params: { ...bucket, 'rules!': list('Rules.', 'object') },
    },
  ],
}
