/**
 * The fields of the token forms, read and validated: `name` (trimmed, 1–100 characters, no control
 * characters, unique among the user's tokens), `scopes` (checkboxes, repeated; `public` always
 * added), `lifetime` (`7`, `30`, `60`, `90` or `365` days, `date`, or `none` where the server has
 * no `--max-token-lifetime`) and `expiresAt` (the date, for `date`: a date, or a date and time, in
 * the future). A form without `lifetime` reads as before lifetimes existed: `date` when `expiresAt`
 * is filled in, else `none`. Every problem is a message that names its field, for the page to show
 * next to it.
 */
import {
  isScope,
  MAX_TOKEN_NAME_LENGTH,
  SCOPES,
  type Scope,
  TOKEN_LIFETIME_DAYS,
  type TokenRecord,
} from 'data-access-policy'
import { DAY_MS } from './days.js'

/** The form fields, by their names in the pages' forms. */
export type TokenField = 'name' | 'scopes' | 'lifetime' | 'expiresAt'

/** Messages by field, for the fields that have a problem. */
export type FieldErrors = Partial<Record<TokenField, string>>

/** What the user typed, to show again after a problem. */
export interface TokenFormValues {
  readonly name: string
  readonly scopes: readonly Scope[]
  /** The lifetime choice: a number of days, `date` or `none`; empty: the page's default. */
  readonly lifetime: string
  readonly expiresAt: string
}

/** Validated fields of the create form: at most one of `lifetimeDays` and `expiresAt`. */
export interface NewTokenFields {
  readonly name: string
  readonly scopes: readonly Scope[]
  /** A lifetime in days, renewed by each rotation. */
  readonly lifetimeDays: number | undefined
  /** A fixed expiry, epoch ms. Neither this nor `lifetimeDays`: the token never expires. */
  readonly expiresAt: number | undefined
}

/** The lifetime choices the create form offers under a cap (all of them without one). */
export function lifetimeChoices(maxLifetimeDays: number | undefined): readonly string[] {
  const days = TOKEN_LIFETIME_DAYS.filter((each) => maxLifetimeDays === undefined || each <= maxLifetimeDays)
  return [...days.map(String), 'date', ...(maxLifetimeDays === undefined ? ['none'] : [])]
}

/** The choice the create form starts on: 30 days, or the longest the cap allows. */
export function defaultLifetime(maxLifetimeDays: number | undefined): string {
  const days = TOKEN_LIFETIME_DAYS.filter((each) => maxLifetimeDays === undefined || each <= maxLifetimeDays)
  if (days.length === 0) return 'date'
  return String(days.includes(30) ? 30 : days[days.length - 1])
}

/**
 * The bounds of the create form's date field, as `YYYY-MM-DD` (a date means 00:00 UTC that day):
 * `min`, the first date still in the future; `max`, under a cap, the last date within it, so that
 * the browser's date picker offers no date the server would refuse.
 *
 * @example
 * expiryDateBounds(Date.parse('2026-11-28T22:00:00Z'), 90) // { min: '2026-11-29', max: '2027-02-26' }
 */
export function expiryDateBounds(
  now: number,
  maxLifetimeDays: number | undefined,
): { readonly min: string; readonly max: string | undefined } {
  const day = (at: number) => new Date(at * DAY_MS).toISOString().slice(0, 10)
  return {
    min: day(Math.floor(now / DAY_MS) + 1),
    max:
      maxLifetimeDays === undefined ? undefined : day(Math.floor((now + maxLifetimeDays * DAY_MS) / DAY_MS)),
  }
}

function capMessage(maxLifetimeDays: number): string {
  const days = maxLifetimeDays === 1 ? '1 day' : `${maxLifetimeDays} days`
  return `Expiration: token lifetimes are capped at ${days} on this server; choose ${days} or fewer.`
}

/** Validated fields of the edit form; an absent field leaves the token's value as it is. */
export interface TokenChanges {
  readonly name: string | undefined
  readonly scopes: readonly Scope[] | undefined
}

/** A validation outcome: the fields, or messages by field and what to show again. */
export type FormOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errors: FieldErrors; readonly values: TokenFormValues }

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/

function countCodePoints(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

function checkName(
  raw: string,
  others: readonly TokenRecord[],
): { ok: true; name: string } | { ok: false; error: string } {
  const name = raw.trim()
  if (name === '') return { ok: false, error: 'Name: enter a name for the token.' }
  if (countCodePoints(name) > MAX_TOKEN_NAME_LENGTH) {
    return { ok: false, error: `Name: use at most ${MAX_TOKEN_NAME_LENGTH} characters.` }
  }
  if (CONTROL_CHARACTER.test(name)) return { ok: false, error: 'Name: remove the control characters.' }
  if (others.some((token) => token.name === name)) {
    return { ok: false, error: 'Name: you already have a token with this name; choose another.' }
  }
  return { ok: true, name }
}

function checkScopes(
  fields: readonly string[],
): { ok: true; scopes: Scope[] } | { ok: false; error: string } {
  // Checkboxes send one name per field; a scope string ("data.data wokflow.read") reads the same.
  const values = fields.flatMap((field) => field.split(' ').filter((name) => name !== ''))
  const unknown = values.find((value) => !isScope(value))
  if (unknown !== undefined) return { ok: false, error: 'Scopes: choose only from the scopes listed.' }
  const chosen = new Set<string>(values)
  return { ok: true, scopes: SCOPES.filter((scope) => scope === 'public' || chosen.has(scope)) }
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/**
 * Parses an expiry: `YYYY-MM-DD` (00:00 UTC that day), `YYYY-MM-DDTHH:MM[:SS]` (UTC), or the
 * same with `Z` or an offset. Undefined when it is none of these or no real date.
 *
 * @example
 * parseExpiry('2027-01-31')           // Date.UTC(2027, 0, 31)
 * parseExpiry('2027-01-31T08:30+01:00') // Date.UTC(2027, 0, 31, 7, 30)
 */
export function parseExpiry(text: string): number | undefined {
  const date = DATE.exec(text)
  if (date !== null) {
    const [year, month, day] = date.slice(1, 4).map(Number) as [number, number, number]
    return isCalendarDate(year, month, day) ? Date.UTC(year, month - 1, day) : undefined
  }
  const match = DATE_TIME.exec(text)
  if (match === null) return undefined
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ]
  const second = Number(match[6] ?? '0')
  if (!isCalendarDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return undefined
  const at = Date.parse(match[7] === undefined ? `${text}Z` : text)
  return Number.isNaN(at) ? undefined : at
}

function checkExpiry(raw: string, now: number): { ok: true; at: number } | { ok: false; error: string } {
  const text = raw.trim()
  if (text === '') return { ok: false, error: 'Expiry: enter the date the token stops working.' }
  const at = parseExpiry(text)
  if (at === undefined) return { ok: false, error: 'Expiry: enter a date such as 2030-01-31.' }
  if (!(at > now)) return { ok: false, error: 'Expiry: choose a date in the future.' }
  return { ok: true, at }
}

type Lifetime = { lifetimeDays: number | undefined; expiresAt: number | undefined }

function checkLifetime(
  form: URLSearchParams,
  now: number,
  maxLifetimeDays: number | undefined,
): { ok: true; value: Lifetime } | { ok: false; field: TokenField; error: string } {
  const rawLifetime = one(form, 'lifetime')
  const rawExpiry = one(form, 'expiresAt')
  if (rawLifetime === null) return { ok: false, field: 'lifetime', error: 'Expiration: choose one.' }
  if (rawExpiry === null) return { ok: false, field: 'expiresAt', error: 'Expiry: give one date.' }
  const choice = rawLifetime ?? ((rawExpiry ?? '').trim() === '' ? 'none' : 'date')
  if (choice === 'none') {
    if (maxLifetimeDays !== undefined)
      return { ok: false, field: 'lifetime', error: capMessage(maxLifetimeDays) }
    return { ok: true, value: { lifetimeDays: undefined, expiresAt: undefined } }
  }
  if (choice === 'date') {
    const expiry = checkExpiry(rawExpiry ?? '', now)
    if (!expiry.ok) return { ok: false, field: 'expiresAt', error: expiry.error }
    if (maxLifetimeDays !== undefined && expiry.at - now > maxLifetimeDays * DAY_MS) {
      return { ok: false, field: 'expiresAt', error: capMessage(maxLifetimeDays) }
    }
    return { ok: true, value: { lifetimeDays: undefined, expiresAt: expiry.at } }
  }
  const days = TOKEN_LIFETIME_DAYS.find((each) => String(each) === choice)
  if (days === undefined) {
    return { ok: false, field: 'lifetime', error: 'Expiration: choose one of the options listed.' }
  }
  if (maxLifetimeDays !== undefined && days > maxLifetimeDays) {
    return { ok: false, field: 'lifetime', error: capMessage(maxLifetimeDays) }
  }
  return { ok: true, value: { lifetimeDays: days, expiresAt: undefined } }
}

/** A field given once; several values of a single-valued field are a problem, not a choice. */
function one(form: URLSearchParams, name: TokenField): string | undefined | null {
  const values = form.getAll(name)
  if (values.length === 0) return undefined
  return values.length === 1 ? values[0]! : null
}

function valuesOf(form: URLSearchParams): TokenFormValues {
  const chosen = new Set(form.getAll('scopes').flatMap((field) => field.split(' ')))
  return {
    name: form.get('name') ?? '',
    scopes: SCOPES.filter((scope) => scope === 'public' || chosen.has(scope)),
    lifetime: form.get('lifetime') ?? '',
    expiresAt: form.get('expiresAt') ?? '',
  }
}

/**
 * Validates the create form against the user's current (unrevoked) tokens and the server's
 * lifetime cap (`--max-token-lifetime`), if any.
 *
 * @example
 * readNewToken(form, await listed(handle), Date.now(), 90)
 */
export function readNewToken(
  form: URLSearchParams,
  existing: readonly TokenRecord[],
  now: number,
  maxLifetimeDays?: number,
): FormOutcome<NewTokenFields> {
  const errors: FieldErrors = {}
  const rawName = one(form, 'name')
  const name =
    rawName === null
      ? { ok: false as const, error: 'Name: give one name.' }
      : checkName(rawName ?? '', existing)
  if (!name.ok) errors.name = name.error
  const scopes = checkScopes(form.getAll('scopes'))
  if (!scopes.ok) errors.scopes = scopes.error
  const lifetime = checkLifetime(form, now, maxLifetimeDays)
  if (!lifetime.ok) errors[lifetime.field] = lifetime.error
  if (!name.ok || !scopes.ok || !lifetime.ok) return { ok: false, errors, values: valuesOf(form) }
  return { ok: true, value: { name: name.name, scopes: scopes.scopes, ...lifetime.value } }
}

/**
 * Validates the edit form of `token`: a field that is absent keeps the token's value (the pages'
 * forms always send both; `scopes` through a hidden `public` field, so that unticking every box
 * still means "public only").
 *
 * @example
 * readTokenChanges(form, token, await listed(handle))
 */
export function readTokenChanges(
  form: URLSearchParams,
  token: TokenRecord,
  existing: readonly TokenRecord[],
): FormOutcome<TokenChanges> {
  const errors: FieldErrors = {}
  const others = existing.filter((each) => each.id !== token.id)
  const rawName = one(form, 'name')
  let name: string | undefined
  if (rawName === null) errors.name = 'Name: give one name.'
  else if (rawName !== undefined) {
    const checked = checkName(rawName, others)
    if (checked.ok) name = checked.name
    else errors.name = checked.error
  }
  let scopes: readonly Scope[] | undefined
  if (form.has('scopes')) {
    const checked = checkScopes(form.getAll('scopes'))
    if (checked.ok) scopes = checked.scopes
    else errors.scopes = checked.error
  }
  if (errors.name !== undefined || errors.scopes !== undefined) {
    const chosen = new Set(
      form.has('scopes') ? form.getAll('scopes').flatMap((field) => field.split(' ')) : token.scopes,
    )
    return {
      ok: false,
      errors,
      values: {
        name: form.get('name') ?? token.name,
        scopes: SCOPES.filter((scope) => scope === 'public' || chosen.has(scope)),
        lifetime: '',
        expiresAt: '',
      },
    }
  }
  return { ok: true, value: { name, scopes } }
}
