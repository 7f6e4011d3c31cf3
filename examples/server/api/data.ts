/**
 * The reference server's in-memory data: users, organizations, datasets and workflows built from a
 * seed. Each server instance owns its own copy, so the few writes the API allows (a description,
 * a version release, a member's status, a workflow run) never leak between instances.
 */
import type {
  DatasetLevel,
  ExportRestrictions,
  PublicDatasetLevel,
  PublicWorkflowLevel,
  WorkflowLevel,
} from 'data-access-policy'
import type { Seed } from '../seed/load.js'
import type { SeedTable } from '../seed/schema.js'

/** A member's standing in an organization. */
export type MemberStatus = 'pending' | 'approved' | 'rejected'

/** The member statuses, in the order they are documented. */
export const MEMBER_STATUSES: readonly MemberStatus[] = ['pending', 'approved', 'rejected']

export interface Organization {
  readonly handle: string
  readonly admins: ReadonlySet<string>
  /** Seeded members start `approved`. */
  readonly members: Map<string, MemberStatus>
}

export interface Dataset {
  readonly owner: string
  readonly name: string
  description: string
  readonly publicLevel: PublicDatasetLevel
  readonly access: ReadonlyMap<string, DatasetLevel>
  readonly exportRestrictions: ExportRestrictions | undefined
  readonly tables: readonly SeedTable[]
  /** Versions released so far; a seeded dataset has none. */
  versions: number
}

export interface Workflow {
  readonly owner: string
  readonly name: string
  readonly publicLevel: PublicWorkflowLevel
  readonly access: ReadonlyMap<string, WorkflowLevel>
  /** Runs queued so far, numbering the next run's id. */
  runs: number
}

/** Whether a handle names a user or an organization. */
export type OwnerKind = 'user' | 'organization'

function keyOf(owner: string, name: string): string {
  return `${owner}/${name}`
}

// Code-unit order, not locale order: the same on every machine, so listings page stably.
function byName(a: { readonly name: string }, b: { readonly name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}

/** The server's data, built from a seed. */
export class DataModel {
  readonly #owners = new Map<string, OwnerKind>()
  readonly #organizations = new Map<string, Organization>()
  readonly #datasets = new Map<string, Dataset>()
  readonly #datasetsByOwner = new Map<string, Dataset[]>()
  readonly #workflows = new Map<string, Workflow>()

  constructor(seed: Seed) {
    for (const user of seed.users) this.#owners.set(user.handle, 'user')
    for (const organization of seed.organizations) {
      this.#owners.set(organization.handle, 'organization')
      this.#organizations.set(organization.handle, {
        handle: organization.handle,
        admins: new Set(organization.admins),
        members: new Map(organization.members.map((member) => [member, 'approved'])),
      })
    }
    for (const spec of seed.datasets) {
      const dataset: Dataset = {
        owner: spec.owner,
        name: spec.name,
        description: spec.description,
        publicLevel: spec.publicLevel,
        access: new Map(Object.entries(spec.access)),
        exportRestrictions: spec.exportRestrictions,
        tables: spec.tables,
        versions: 0,
      }
      this.#datasets.set(keyOf(spec.owner, spec.name), dataset)
      const owned = this.#datasetsByOwner.get(spec.owner) ?? []
      owned.push(dataset)
      this.#datasetsByOwner.set(spec.owner, owned)
    }
    for (const owned of this.#datasetsByOwner.values()) owned.sort(byName)
    for (const spec of seed.workflows) {
      this.#workflows.set(keyOf(spec.owner, spec.name), {
        owner: spec.owner,
        name: spec.name,
        publicLevel: spec.publicLevel,
        access: new Map(Object.entries(spec.access)),
        runs: 0,
      })
    }
  }

  /** Whether `handle` is a user, an organization, or nothing. */
  ownerKind(handle: string): OwnerKind | undefined {
    return this.#owners.get(handle)
  }

  organization(handle: string): Organization | undefined {
    return this.#organizations.get(handle)
  }

  dataset(owner: string, name: string): Dataset | undefined {
    return this.#datasets.get(keyOf(owner, name))
  }

  /** The datasets an owner holds, by name (code-unit order). */
  datasetsOf(owner: string): readonly Dataset[] {
    return this.#datasetsByOwner.get(owner) ?? []
  }

  workflow(owner: string, name: string): Workflow | undefined {
    return this.#workflows.get(keyOf(owner, name))
  }

  /** Whether `userId` administers the organization named `owner` (false for a user handle). */
  administers(userId: string | undefined, owner: string): boolean {
    return userId !== undefined && this.#organizations.get(owner)?.admins.has(userId) === true
  }
}
