/**
 * How the server describes its data to the policy (design §8): plain resources with the public
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
} from '../../src/index.js'
import type { DataModel, Dataset, Workflow } from './data.js'

/** The user's own level on a dataset, scopes aside; `none` for strangers and the anonymous caller. */
export function datasetLevelOf(model: DataModel, dataset: Dataset, userId: string | undefined): DatasetLevel {
  if (userId === undefined) return 'none'
  if (userId === dataset.owner || model.administers(userId, dataset.owner)) return 'edit'
  return dataset.access.get(userId) ?? 'none'
}

/** The user's own level on a workflow, scopes aside. */
export function workflowLevelOf(
  model: DataModel,
  workflow: Workflow,
  userId: string | undefined,
): WorkflowLevel {
  if (userId === undefined) return 'none'
  if (userId === workflow.owner || model.administers(userId, workflow.owner)) return 'write'
  return workflow.access.get(userId) ?? 'none'
}

/** A dataset as the policy sees it for this principal. */
export function describeDataset(
  model: DataModel,
  dataset: Dataset,
  principal: Principal | undefined,
): DatasetResource {
  const userLevel = datasetLevelOf(model, dataset, principal?.userId)
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
    userLevel: workflowLevelOf(model, workflow, principal?.userId),
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
