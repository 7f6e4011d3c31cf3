/**
 * The data-access API of the reference server (README.md, "Routes"), as neutral routes
 * (routes/route-set.ts), all under `/api/v1` and all
 * behind the library: each route names its operation and describes its resource; handlers run
 * only once the policy allowed, and data-content handlers declare the records they send so the
 * adapter can enforce export caps before the first byte.
 */
import type {
  AccessPolicy,
  DatasetResource,
  Operation,
  Principal,
  WorkflowResource,
} from 'data-access-policy'
import { readJsonObject, unknownKey } from '../request/body.js'
import { invalidParameter, json, notFound } from '../routes/http-result.js'
import type { ApiRequest, Route, RouteAccess, RouteResult, RouteSet } from '../routes/route-set.js'
import { isValidText, MAX_TEXT_LENGTH } from '../seed/shapes.js'
import { tableToCsv } from './csv.js'
import { type DataModel, type Dataset, MEMBER_STATUSES, type MemberStatus, type OwnerKind } from './data.js'
import { describeDataset, describeOrganization, describeWorkflow } from './describe.js'
import {
  DEFAULT_MAX_RESULTS,
  type ListingParams,
  MAX_RESULTS_DETAIL,
  paginate,
  parseMaxResults,
  readListingParams,
} from './listing.js'

/** What the API routes work on. */
export interface ApiContext {
  readonly model: DataModel
  readonly policy: AccessPolicy
}

/** The path prefix of every API route (README.md, "Routes"). */
export const API_PREFIX = '/api/v1'

const DESCRIPTION_DETAIL = `the body must be {"description": text of at most ${MAX_TEXT_LENGTH} characters}`
const EXPORT_DETAIL = 'the body must be {"table": "<table name>"}'
const STATUS_DETAIL = `the body must be {"status": ${MEMBER_STATUSES.map((status) => `"${status}"`).join(' | ')}}`

function param(request: ApiRequest, name: string): string {
  return request.params[name] ?? ''
}

// A route's handler over the context it runs in.
type ApiHandler = (context: ApiContext, request: ApiRequest) => Promise<RouteResult>

function datasetOf(model: DataModel, request: ApiRequest): Dataset | undefined {
  return model.dataset(param(request, 'owner'), param(request, 'name'))
}

/**
 * The resource of dataset `owner/name` as the policy sees it for `principal`, or `undefined` when
 * there is none: the resolver of every dataset route, and of the MCP tools (../mcp/mcp-tools.ts).
 *
 * @example
 * resolveDataset(model, 'acme', 'weather', principal) // { kind: 'dataset', publicLevel: 'overview', … }
 */
export function resolveDataset(
  model: DataModel,
  owner: string,
  name: string,
  principal: Principal | undefined,
): DatasetResource | undefined {
  const found = model.dataset(owner, name)
  return found && describeDataset(model, found, principal)
}

/**
 * The resource of workflow `owner/name` for `principal`, or `undefined` when there is none.
 *
 * @example
 * resolveWorkflow(model, 'acme', 'ingest', principal)
 */
export function resolveWorkflow(
  model: DataModel,
  owner: string,
  name: string,
  principal: Principal | undefined,
): WorkflowResource | undefined {
  const found = model.workflow(owner, name)
  return found && describeWorkflow(model, found, principal)
}

function datasetAccess(model: DataModel, operation: Operation): RouteAccess {
  return {
    operation,
    resource: (request: ApiRequest) =>
      resolveDataset(model, param(request, 'owner'), param(request, 'name'), request.principal),
  }
}

function workflowAccess(model: DataModel, operation: 'workflow.read' | 'workflow.run'): RouteAccess {
  return {
    operation,
    resource: (request: ApiRequest) =>
      resolveWorkflow(model, param(request, 'owner'), param(request, 'name'), request.principal),
  }
}

function organizationAccess(
  model: DataModel,
  operation: 'organization.read' | 'organization.write',
): RouteAccess {
  return {
    operation,
    resource: (request: ApiRequest) => {
      const handle = param(request, 'org')
      return model.organization(handle) && describeOrganization(model, handle, request.principal)
    },
  }
}

// The listing filters with the very call that guards a single dataset, `dataset.list` deciding
// exactly like `dataset.overview`, so a listing can never show what a direct request would hide.
function listDatasets(kind: OwnerKind, key: string): ApiHandler {
  return async ({ model, policy }, request) => {
    const owner = param(request, key)
    const principal = request.principal
    if (principal === undefined || model.ownerKind(owner) !== kind) return notFound()
    const body = await readJsonObject(request, MAX_RESULTS_DETAIL)
    if (!body.ok) return body.result
    const params = readListingParams(request.query, body.value, owner)
    if (!params.ok) return params.result
    return json(listingPage({ model, policy }, principal, owner, params.value))
  }
}

/**
 * One page of the datasets of `owner` that `principal` may see, each filtered with `dataset.list`:
 * the answer of the listing routes and of the MCP tool `list_datasets`.
 *
 * @example
 * listingPage(context, principal, 'acme', { maxResults: 100, after: undefined })
 */
export function listingPage(
  { model, policy }: ApiContext,
  principal: Principal,
  owner: string,
  params: ListingParams,
): { results: unknown[]; nextPageToken: string | null } {
  const visible = model
    .datasetsOf(owner)
    .filter((each) => isListed(policy, principal, describeDataset(model, each, principal)))
  const page = paginate(visible, owner, params)
  return {
    results: page.items.map((each) => ({
      owner: each.owner,
      name: each.name,
      description: each.description,
      publicLevel: each.publicLevel,
    })),
    nextPageToken: page.nextPageToken,
  }
}

async function showOverview({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  return withDataset(datasetOf(model, request), (found) => json(overviewOf(found)))
}

async function updateDescription({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  const found = datasetOf(model, request)
  if (found === undefined) return notFound()
  const description = await readOneField(request, 'description', isDescription, DESCRIPTION_DETAIL)
  if (!description.ok) return description.result
  found.description = description.value
  return json(overviewOf(found))
}

async function showMetadata({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  return withDataset(datasetOf(model, request), (found) => json(metadataOf(found)))
}

/**
 * The metadata answer of a dataset: its tables, their variables and row counts.
 *
 * @example
 * metadataOf(dataset).tables[0] // { name: 'visits', variables: […], numRows: 3 }
 */
export function metadataOf(dataset: Dataset): {
  tables: { name: string; variables: unknown; numRows: number }[]
} {
  return {
    tables: dataset.tables.map((table) => ({
      name: table.name,
      variables: table.variables,
      numRows: table.rows.length,
    })),
  }
}

/**
 * The rows answer of table `name` of a dataset, at most `maxResults` (100 by default) of them, or
 * `undefined` when the dataset has no such table; `records` is how many rows it carries, which the
 * export caps count.
 *
 * @example
 * tableRows(dataset, 'visits', 2) // { body: { rows: [[…], […]] }, records: 2 }
 */
export function tableRows(
  dataset: Dataset | undefined,
  name: string,
  maxResults: number | undefined,
): { body: { rows: unknown[] }; records: number } | undefined {
  const table = dataset?.tables.find((each) => each.name === name)
  if (table === undefined) return undefined
  const rows = table.rows.slice(0, maxResults ?? DEFAULT_MAX_RESULTS)
  return { body: { rows }, records: rows.length }
}

async function readRows({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  const found = datasetOf(model, request)
  if (tableRows(found, param(request, 'table'), 0) === undefined) return notFound()
  const maxResults = parseMaxResults(request.query)
  if (!maxResults.ok) return maxResults.result
  const answer = tableRows(found, param(request, 'table'), maxResults.value)!
  return data('application/json; charset=utf-8', JSON.stringify(answer.body), answer.records)
}

async function createExport({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  const found = datasetOf(model, request)
  if (found === undefined) return notFound()
  const name = await readOneField(request, 'table', isString, EXPORT_DETAIL)
  if (!name.ok) return name.result
  const table = found.tables.find((each) => each.name === name.value)
  if (table === undefined) return notFound()
  return data('text/csv; charset=utf-8', tableToCsv(table), table.rows.length)
}

async function releaseVersion({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  return withDataset(datasetOf(model, request), (found) => {
    found.versions += 1
    return json({ version: found.versions }, 201)
  })
}

async function showWorkflow({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  const found = model.workflow(param(request, 'owner'), param(request, 'name'))
  return found === undefined ? notFound() : json(workflowOf(found))
}

/**
 * The answer about a workflow.
 *
 * @example
 * workflowOf(model.workflow('acme', 'ingest')!) // { owner: 'acme', name: 'ingest' }
 */
export function workflowOf(workflow: { readonly owner: string; readonly name: string }): {
  owner: string
  name: string
} {
  return { owner: workflow.owner, name: workflow.name }
}

async function runWorkflow({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  const found = model.workflow(param(request, 'owner'), param(request, 'name'))
  if (found === undefined) return notFound()
  found.runs += 1
  return json({ run: { id: `run-${found.runs}`, status: 'queued' } }, 202)
}

async function showOrganization({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  const found = model.organization(param(request, 'org'))
  if (found === undefined) return notFound()
  return json({
    handle: found.handle,
    admins: [...found.admins],
    members: [...found.members].map(([user, status]) => ({ user, status })),
  })
}

async function setMemberStatus({ model }: ApiContext, request: ApiRequest): Promise<RouteResult> {
  const found = model.organization(param(request, 'org'))
  const user = param(request, 'user')
  if (found === undefined || !found.members.has(user)) return notFound()
  const status = await readOneField(request, 'status', isMemberStatus, STATUS_DETAIL)
  if (!status.ok) return status.result
  found.members.set(user, status.value)
  return json({ user, status: status.value })
}

/**
 * Builds the API route set.
 *
 * @example
 * const routes = apiRoutes({ model: new DataModel(seed), policy })
 */
export function apiRoutes(context: ApiContext): RouteSet {
  const { model } = context
  const on =
    (handler: ApiHandler): Route['handle'] =>
    (request) =>
      handler(context, request)
  const dataset = (operation: Operation) => datasetAccess(model, operation)
  const routes: Route[] = [
    {
      method: 'GET',
      path: '/organizations/:org/datasets',
      access: {},
      handle: on(listDatasets('organization', 'org')),
    },
    { method: 'GET', path: '/users/:user/datasets', access: {}, handle: on(listDatasets('user', 'user')) },
    {
      method: 'GET',
      path: '/datasets/:owner/:name',
      access: dataset('dataset.overview'),
      handle: on(showOverview),
    },
    {
      method: 'PATCH',
      path: '/datasets/:owner/:name',
      access: dataset('dataset.update'),
      handle: on(updateDescription),
    },
    {
      method: 'GET',
      path: '/datasets/:owner/:name/metadata',
      access: dataset('dataset.metadata'),
      handle: on(showMetadata),
    },
    {
      method: 'GET',
      path: '/datasets/:owner/:name/tables/:table/rows',
      access: dataset('table.read'),
      handle: on(readRows),
    },
    {
      method: 'POST',
      path: '/datasets/:owner/:name/exports',
      access: dataset('export.create'),
      handle: on(createExport),
    },
    {
      method: 'POST',
      path: '/datasets/:owner/:name/versions',
      access: dataset('version.release'),
      handle: on(releaseVersion),
    },
    {
      method: 'GET',
      path: '/workflows/:owner/:name',
      access: workflowAccess(model, 'workflow.read'),
      handle: on(showWorkflow),
    },
    {
      method: 'POST',
      path: '/workflows/:owner/:name/runs',
      access: workflowAccess(model, 'workflow.run'),
      handle: on(runWorkflow),
    },
    {
      method: 'GET',
      path: '/organizations/:org',
      access: organizationAccess(model, 'organization.read'),
      handle: on(showOrganization),
    },
    {
      method: 'PATCH',
      path: '/organizations/:org/members/:user',
      access: organizationAccess(model, 'organization.write'),
      handle: on(setMemberStatus),
    },
  ]
  return { name: 'api', routes: routes.map((route) => ({ ...route, path: `${API_PREFIX}${route.path}` })) }
}

type OneField<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly result: RouteResult }

// The bodies that change something are a JSON object with exactly one key, whose value `accepts`
// takes; anything else is 400 `invalid_parameter` with `detail`.
async function readOneField<T>(
  request: ApiRequest,
  key: string,
  accepts: (value: unknown) => value is T,
  detail: string,
): Promise<OneField<T>> {
  const body = await readJsonObject(request, detail)
  if (!body.ok) return body
  const value = body.value?.[key]
  if (body.value === undefined || unknownKey(body.value, [key]) !== undefined || !accepts(value)) {
    return { ok: false, result: invalidParameter(detail) }
  }
  return { ok: true, value }
}

const isString = (value: unknown): value is string => typeof value === 'string'
const isDescription = (value: unknown): value is string =>
  typeof value === 'string' && isValidText(value, MAX_TEXT_LENGTH)
const isMemberStatus = (value: unknown): value is MemberStatus =>
  (MEMBER_STATUSES as readonly unknown[]).includes(value)

function isListed(
  policy: AccessPolicy,
  principal: Principal,
  resource: ReturnType<typeof describeDataset>,
): boolean {
  return policy.authorize(principal, 'dataset.list', resource).allowed
}

/**
 * The overview answer of a dataset.
 *
 * @example
 * overviewOf(dataset) // { owner: 'acme', name: 'weather', description: '…' }
 */
export function overviewOf(dataset: Dataset): { owner: string; name: string; description: string } {
  return { owner: dataset.owner, name: dataset.name, description: dataset.description }
}

// The guard already resolved the dataset; it can only be gone here if it vanished in between.
function withDataset(found: Dataset | undefined, answer: (dataset: Dataset) => RouteResult): RouteResult {
  return found === undefined ? notFound() : answer(found)
}

function data(contentType: string, body: string, records: number): RouteResult {
  return { kind: 'data', status: 200, contentType, body, records }
}
