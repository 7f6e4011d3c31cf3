/**
 * The reference server's MCP tools (Model Context Protocol): the five of README.md's "MCP" table,
 * each one operation of the catalogue, decided by the gate of `data-access-policy/mcp` with the same
 * policy rules and the same resolvers and answers as the REST routes (../api/api-routes.ts), so that
 * a tool answers what the route answers for the same token and resource.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { McpGate } from 'data-access-policy/mcp'
import { z } from 'zod'
import {
  type ApiContext,
  listingPage,
  metadataOf,
  overviewOf,
  resolveDataset,
  resolveWorkflow,
  tableRows,
  workflowOf,
} from '../api/api-routes.js'
import { DEFAULT_MAX_RESULTS, MAX_MAX_RESULTS } from '../api/listing.js'

/** Where the MCP endpoint is, under the public URL; its resource identifier is `{public-url}/mcp`. */
export const MCP_PATH = '/mcp'

const maxResults = z.number().int().min(1).max(MAX_MAX_RESULTS).optional()
const datasetArgs = { owner: z.string(), name: z.string() }

/**
 * A fresh MCP server with the five tools, for one request (the endpoint is stateless: each POST
 * is answered on its own, so any instance of the server can answer it).
 *
 * @example
 * const server = createMcpServer(gate, { model, policy })
 * await server.connect(transport)
 */
export function createMcpServer(gate: McpGate, context: ApiContext): McpServer {
  const { model } = context
  const server = new McpServer({ name: 'data-access-policy reference server', version: '0.1.0' })
  server.registerTool(
    'list_datasets',
    {
      description: 'Lists the datasets of an organization or a user that you may see, one page at a time.',
      inputSchema: { organization: z.string().optional(), user: z.string().optional(), maxResults },
    },
    (args, extra) =>
      gate.call(extra.authInfo, 'list_datasets', {
        answer: (principal) => {
          const kind = args.organization === undefined ? 'user' : 'organization'
          const owner = args.organization ?? args.user
          // Exactly one owner, of the kind named: as the two listing routes, anything else is not found.
          if (owner === undefined || (args.organization !== undefined && args.user !== undefined))
            return undefined
          if (model.ownerKind(owner) !== kind) return undefined
          const params = { maxResults: args.maxResults ?? DEFAULT_MAX_RESULTS, after: undefined }
          return { value: listingPage(context, principal, owner, params) }
        },
      }),
  )
  server.registerTool(
    'get_dataset',
    { description: "A dataset's overview: owner, name and description.", inputSchema: datasetArgs },
    ({ owner, name }, extra) =>
      gate.call(extra.authInfo, 'get_dataset', {
        resolve: (principal) => resolveDataset(model, owner, name, principal),
        answer: () => ({ value: overviewOf(model.dataset(owner, name)!) }),
      }),
  )
  server.registerTool(
    'get_dataset_metadata',
    { description: "A dataset's tables, their variables and row counts.", inputSchema: datasetArgs },
    ({ owner, name }, extra) =>
      gate.call(extra.authInfo, 'get_dataset_metadata', {
        resolve: (principal) => resolveDataset(model, owner, name, principal),
        answer: () => ({ value: metadataOf(model.dataset(owner, name)!) }),
      }),
  )
  server.registerTool(
    'read_table_rows',
    {
      description: "Rows of a dataset's table, within the dataset's export restrictions.",
      inputSchema: { ...datasetArgs, table: z.string(), maxResults },
    },
    ({ owner, name, table, maxResults: max }, extra) =>
      gate.call(extra.authInfo, 'read_table_rows', {
        resolve: (principal) => resolveDataset(model, owner, name, principal),
        answer: () => {
          const rows = tableRows(model.dataset(owner, name), table, max)
          return rows && { value: rows.body, records: rows.records }
        },
      }),
  )
  server.registerTool(
    'get_workflow',
    { description: 'A workflow: owner and name.', inputSchema: datasetArgs },
    ({ owner, name }, extra) =>
      gate.call(extra.authInfo, 'get_workflow', {
        resolve: (principal) => resolveWorkflow(model, owner, name, principal),
        answer: () => ({ value: workflowOf(model.workflow(owner, name)!) }),
      }),
  )
  return server
}
