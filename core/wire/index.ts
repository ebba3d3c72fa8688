/**
 * @module cordage/wire
 * Helpers for adapters that speak a provider's HTTP protocol: one request with abort, idle timeout and
 * classified errors; the client that frames each call; the config keys every adapter takes; server-sent
 * events; Retry-After; redaction; prices. Not part of the kernel (the kernel never imports it); model
 * plugins share it instead of each writing their own.
 */
export { HttpCall, isTransientStatus, providerMessage, joinUrl, shownUrl, type HttpCallOptions, type WireSchema } from './http.ts'
export { readSse, type SseMessage } from './sse.ts'
export { retryAfterMs } from './retry-after.ts'
export { Redactor } from './redact.ts'
export { costOf, PricesSchema, type Prices, type TokenCounts } from './prices.ts'
export { parseArgs, type ParsedArgs } from './args.ts'
export { AskUserTool, decisionOf, offeredTools, wireCallId, type ReceivedCall } from './decision.ts'
export { endpoint, type Endpoint, type EndpointOptions } from './endpoint.ts'
export { isJsonAnswer, OpenAIBaseUrl, openAICompatible, ProviderClient, type ConnectionConfig, type ProviderApi } from './client.ts'
export { AdapterSchema, checkExtraBody, OwnedBodyKeys, type AdapterConfig, type ConfiguredBodyKey } from './adapter-config.ts'
