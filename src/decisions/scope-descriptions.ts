import type { Scope } from './scopes.js'

/**
 * What each scope grants: the "Grants" column of the contract's scope table (docs/concepts.md,
 * "Scopes"), word for word, so that a token form, a consent page and an API description all promise
 * what the contract does.
 *
 * @example
 * SCOPE_DESCRIPTIONS['data.metadata'] // 'Metadata access to datasets whose metadata …'
 */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = Object.freeze({
  public:
    'Default; present on every token. Access only to publicly available resources, as when logged out. A token with only this scope can be shared safely.',
  'data.overview':
    "Overview access to datasets that the user can see but that are hidden from the public. Reveals the dataset's existence and some documentation. Does not reveal restricted variable names, summary statistics or data.",
  'data.metadata':
    'Metadata access to datasets whose metadata the user can view but that are hidden from the public.',
  'data.data':
    'Access to the full tables of a dataset, and their derivatives, when the dataset is available to the user but hidden from the public.',
  'data.edit': 'Create, edit and delete datasets. It also allows releasing new dataset versions.',
  'wokflow.read': 'Read access to workflows and the contents of their nodes.',
  'workflow.write': 'Write access to workflows, including running notebooks and transforms programmatically.',
  'organization.read':
    'Read-only access to administrative information about any organization the user administers.',
  'organization.write':
    "Change administrative information in the user's organizations, such as members' status and approvals.",
})
