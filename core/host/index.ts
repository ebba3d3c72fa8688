/**
 * @module cordage/host
 * Loading presets and plugins: what the CLI (and an embedding application) uses. Re-exports only.
 */
export { Cordage, type CordageOptions } from './app.ts'
export { PluginCatalog, BuiltinPluginsDir, type CatalogEntry } from './catalog.ts'
export { loadPreset, type Preset, type AgentSpec, type PluginRef } from './preset.ts'
export { planAgent, type AgentPlan, type PlannedPlugin } from './resolve.ts'
export { checkManifest } from './manifest-check.ts'
export { closest } from '../kit/closest.ts'
export { LogLevels, DefaultLogLevel, attachLogSink, type LogLevel, type LogSink } from './logging.ts'
export { DevReloader, type DevOptions, type WatchedFolder } from './dev.ts'
