/**
 * @module cordage/testing
 * Testing a plugin the way Cordage's own tests do (docs/guides/testing.md): the scripted model, an app
 * on the real host with store-memory, and assertions on a run's status, failure code, side effects and
 * event order. Re-exports only.
 */
export { scriptedModel, testPreset, type ScriptStep, type PluginEntry, type TestPresetOptions } from './preset.ts'
export { startApp, type StartOptions, type TestApp, type TestRun } from './harness.ts'
export { expectStatus, expectFailure, expectSideEffects, expectEventOrder, eventsOf, type EventPattern } from './expect.ts'
