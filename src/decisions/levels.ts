/** Dataset access levels, cumulative, lowest first: each level includes those before it. */
export const DATASET_LEVELS = Object.freeze(['none', 'overview', 'metadata', 'data', 'edit'] as const)

/** A dataset access level: `none < overview < metadata < data < edit`. */
export type DatasetLevel = (typeof DATASET_LEVELS)[number]

/** The levels a dataset can have for the public (logged-out) caller; `edit` is never public. */
export const PUBLIC_DATASET_LEVELS = Object.freeze(['none', 'overview', 'metadata', 'data'] as const)

/** A dataset's public level. */
export type PublicDatasetLevel = (typeof PUBLIC_DATASET_LEVELS)[number]

/** Workflow access levels, lowest first. */
export const WORKFLOW_LEVELS = Object.freeze(['none', 'read', 'write'] as const)

/** A workflow access level: `none < read < write`. */
export type WorkflowLevel = (typeof WORKFLOW_LEVELS)[number]

/** The levels a workflow can have for the public. */
export const PUBLIC_WORKFLOW_LEVELS = Object.freeze(['none', 'read'] as const)

/** A workflow's public level. */
export type PublicWorkflowLevel = (typeof PUBLIC_WORKFLOW_LEVELS)[number]
