/**
 * rousseau-host: the package entry for plugin authors (the contract helpers) and for embedders
 * (`createHost`, `Agent`).
 */
export { defineConfig, definePlugin, defineTool } from './contract.ts';
export type { Plugin, PluginLogger, PluginSetupContext, Tool, ToolAnnotations, ToolContext, ToolOutput } from './contract.ts';
export type { HostConfig } from './config-schema.ts';
export { createHost, DEFAULT_AUDIT_FILE } from './host.ts';
export type { Host, HostOptions } from './host.ts';
export type { ApprovalRequest, ApproveFn } from './dispatch.ts';
export { HostError, RESULT_CODES } from './errors.ts';
export type { HostErrorCode, ResultCode } from './errors.ts';
export type { CallOptions, CallResult, PluginStatus, Progress, ToolInfo, Violation } from './types.ts';
