import type { ExportRestrictions } from '../restrictions/export-restrictions.js'
import type { DatasetLevel, PublicDatasetLevel, PublicWorkflowLevel, WorkflowLevel } from './levels.js'

/** A dataset as the host describes it to the policy. */
export interface DatasetResource {
  readonly kind: 'dataset'
  /** What a logged-out caller may do with it. */
  readonly publicLevel: PublicDatasetLevel
  /** What the principal's user may do with it, scopes aside; `none` (the default) for strangers. */
  readonly userLevel?: DatasetLevel
  /** Compiled export restrictions on its raw data, from `compileExportRestrictions`. */
  readonly exportRestrictions?: ExportRestrictions
}

/** A workflow as the host describes it to the policy. */
export interface WorkflowResource {
  readonly kind: 'workflow'
  /** `read` when the public may read it. */
  readonly publicLevel: PublicWorkflowLevel
  /** What the principal's user may do with it, scopes aside; `none` by default. */
  readonly userLevel?: WorkflowLevel
}

/** An organization as the host describes it to the policy. */
export interface OrganizationResource {
  readonly kind: 'organization'
  /** True when the principal's user administers this organization. */
  readonly administered: boolean
}

/** Any resource the policy decides on, described as plain data. */
export type Resource = DatasetResource | WorkflowResource | OrganizationResource
