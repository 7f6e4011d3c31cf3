/**
 * How the server describes its data to the policy (docs/concepts.md): plain resources with the public
 * level and the caller's own level. A user's level on a dataset is the highest of
 * - the dataset's `access` entry for the user;
 * - `edit` for the owning user;
 * - `edit` for the admins of the owning organization (members get nothing implicitly).
 * Workflows follow the same rule with `write` in place of `edit`.
 */
import type {
  DatasetLevel,
  DatasetResource,
  OrganizationResource,
  Principal,
  WorkflowLevel,
  WorkflowResource,
} from 'data-access-policy'
import type { DataModel, Dataset, Workflow } from './data.js'

/**
 * The user's own level on a dataset or workflow, scopes aside: `top` (`edit`, `write`) for the owner
 * and the admins of an owning organization, else what `access` grants; `none` for strangers and the
 * anonymous caller.
 */
function ownLevel<L extends string>(
  model: DataModel,
  entry: { readonly owner: string; readonly access: ReadonlyMap<string, L> },
  userId: string | undefined,
  top: L,
): L | 'none' {
  if (userId === undefined) return 'none'
  if (userId === entry.owner || model.administers(userId, entry.owner)) return top
  return entry.access.get(userId) ?? 'none'
}

/** A dataset as the policy sees it for this principal. */
export function describeDataset(
  model: DataModel,
  dataset: Dataset,
  principal: Principal | undefined,
): DatasetResource {
  const userLevel = ownLevel<DatasetLevel>(model, dataset, principal?.userId, 'edit')
  return dataset.exportRestrictions === undefined
    ? { kind: 'dataset', publicLevel: dataset.publicLevel, userLevel }
    : {
        kind: 'dataset',
        publicLevel: dataset.publicLevel,
        userLevel,
        exportRestrictions: dataset.exportRestrictions,
      }
}

/** A workflow as the policy sees it for this principal. */
export function describeWorkflow(
  model: DataModel,
  workflow: Workflow,
  principal: Principal | undefined,
): WorkflowResource {
  return {
    kind: 'workflow',
    publicLevel: workflow.publicLevel,
    userLevel: ownLevel<WorkflowLevel>(model, workflow, principal?.userId, 'write'),
  }
}

/** An organization as the policy sees it: only whether the caller administers it. */
export function describeOrganization(
  model: DataModel,
  handle: string,
  principal: Principal | undefined,
): OrganizationResource {
  return { kind: 'organization', administered: model.administers(principal?.userId, handle) }
}
