/**
 * Guarding an MCP server (Model Context Protocol, Streamable HTTP) with an access policy: the tool →
 * operation map, the HTTP check before the SDK's transport (401 with RFC 9728 metadata and `scope`,
 * 403 `insufficient_scope` for step-up), and the translation of decisions into tool results. Nothing
 * here imports `@modelcontextprotocol/sdk`: its shapes are typed structurally.
 *
 * @packageDocumentation
 * @module data-access-policy/mcp
 */
export {
  calledTools,
  createMcpGate,
  type McpAuthInfo,
  type McpCheck,
  type McpGate,
  type McpGateOptions,
  type McpHttpRequest,
  type McpToolSteps,
} from '../../src/mcp/gate.js'
export {
  type McpAnswer,
  type McpTextContent,
  type McpToolResult,
  toolDenial,
  toolResult,
} from '../../src/mcp/tool-results.js'
export {
  accumulatedScope,
  checkToolOperations,
  MCP_TOOL_OPERATIONS,
  type McpToolOperations,
  reduceScopes,
  toolScope,
} from '../../src/mcp/tools.js'
export { type McpExpressRequest, mcpExpress } from './express.js'
export { type McpEnv, type McpHonoOptions, type McpVariables, mcpHono } from './hono.js'
export { type NodeMcpSource, nodeMcpRequest } from './node.js'
