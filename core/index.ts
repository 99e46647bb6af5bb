/**
 * rousseau-host: the package entry for plugin authors (the contract helpers) and for embedders
 * (`createHost`, `Agent`).
 */
export { defineConfig, definePlugin, defineTool, defineToolFor } from './contract.ts';
export type {
  Authorization,
  ContentBlock,
  EmbeddedResource,
  Plugin,
  PluginLogger,
  PluginSetupContext,
  Tool,
  ToolAnnotations,
  ToolContext,
  ToolOutput,
} from './contract.ts';
export type { HostConfig } from './config-schema.ts';
export { createHost, DEFAULT_AUDIT_FILE } from './host.ts';
export type { Host, HostOptions, PluginLoad, PolicyCheck } from './host.ts';
export type { Decision, PolicyDecision, PolicyRule } from './policy.ts';
export type { AuditRecord } from './audit-lines.ts';
export type { ApprovalRequest, ApproveFn } from './dispatch.ts';
export { HostError, RESULT_CODES } from './errors.ts';
export type { HostErrorCode, ResultCode } from './errors.ts';
export type {
  CallEnd,
  Caller,
  CallOptions,
  CallResult,
  LogEntry,
  PluginStatus,
  Progress,
  ToolInfo,
  Violation,
} from './types.ts';
export { Agent } from './agent/agent.ts';
export type {
  AgentError,
  AgentEvent,
  AgentHost,
  AgentOptions,
  RunOptions,
  RunResult,
  RunStopReason,
  UsageReport,
} from './agent/agent.ts';
export { ProviderError } from './agent/messages.ts';
export type {
  Message,
  ModelPricing,
  ModelRequest,
  ModelResponse,
  Provider,
  ProviderErrorCode,
  ToolCall,
  ToolResult,
  ToolSpec,
  Usage,
} from './agent/messages.ts';
export {
  anthropicProvider,
  createProvider,
  openaiProvider,
  openaiResponsesProvider,
  replayProvider,
} from './agent/providers/index.ts';
export { BUILTIN_PRICING, costOf, pricingOf } from './agent/pricing.ts';
export type { AnthropicOptions } from './agent/providers/anthropic.ts';
export type { MaxTokensField, OpenAIOptions } from './agent/providers/openai.ts';
export type { OpenAIResponsesOptions } from './agent/providers/openai-responses.ts';
export type { ReplayOptions, ReplayScript } from './agent/providers/replay.ts';
