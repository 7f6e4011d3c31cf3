/**
 * The MCP SDK's client as a test drives it: an `OAuthClientProvider` whose browser part posts the
 * sign-in and consent forms headlessly, and a connect that goes through one authorization. The
 * client is one the operator registered (its id given), or one that finds its own: the SDK uses the
 * provider's `clientMetadataUrl` when the server supports documents, and registers otherwise.
 */
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import { expect } from 'vitest'
import { formWith, PageAgent } from './oauth-agent.js'

/** Who the agent is to the authorization server. */
export interface AgentIdentity {
  readonly redirectUrl: string
  /** A client id the operator registered; absent: the SDK takes a document URL or registers. */
  readonly clientId?: string
  /** The client ID metadata document's URL (`https`, with a path), when the agent has one. */
  readonly clientMetadataUrl?: string
}

/**
 * The SDK's client-side OAuth state for one agent, with the browser's part done by posting the
 * sign-in and consent forms as `user`. Records every authorization request it was sent to and every
 * consent page it answered.
 */
export class HeadlessProvider implements OAuthClientProvider {
  readonly requests: URL[] = []
  readonly consentPages: string[] = []
  readonly clientMetadataUrl?: string
  #client: OAuthClientInformationMixed | undefined
  #tokens: OAuthTokens | undefined
  #verifier = ''
  #code: string | undefined

  constructor(
    readonly user: string,
    readonly password: string,
    readonly identity: AgentIdentity,
  ) {
    if (identity.clientMetadataUrl !== undefined) this.clientMetadataUrl = identity.clientMetadataUrl
    if (identity.clientId !== undefined) this.#client = { client_id: identity.clientId }
  }

  get redirectUrl(): string {
    return this.identity.redirectUrl
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'test agent',
      redirect_uris: [this.identity.redirectUrl],
      token_endpoint_auth_method: 'none',
    }
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.#client = client
  }

  state(): string {
    return crypto.randomUUID()
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier
  }

  codeVerifier(): string {
    return this.#verifier
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.requests.push(url)
    const browser = new PageAgent(url.origin)
    const signIn = await browser.get(url.toString())
    expect(signIn.status).toBe(200)
    const consent = await browser.submit(formWith(signIn.body, 'password'), {
      handle: this.user,
      password: this.password,
    })
    expect(consent.status).toBe(200)
    this.consentPages.push(consent.body)
    const answer = await browser.submit(formWith(consent.body, 'decision'), {}, { button: 'approve' })
    const code = new URL(answer.location!).searchParams.get('code')
    expect(code).not.toBeNull()
    this.#code = code!
  }

  /** The code of the last approved authorization, once. */
  takeCode(): string {
    const code = this.#code
    this.#code = undefined
    if (code === undefined) throw new Error('no authorization was approved')
    return code
  }
}

/** The SDK's client, named as a test agent. */
export const mcpClient = () => new Client({ name: 'test-agent', version: '1.0.0' })

/**
 * Connects with OAuth and nothing but the URL: the first attempt discovers, finds a client id and
 * is sent to sign in; the second connects with the token.
 */
export async function connectWithOAuth(url: URL, provider: HeadlessProvider) {
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
  await expect(mcpClient().connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
  await first.finishAuth(provider.takeCode())
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider })
  const client = mcpClient()
  await client.connect(transport)
  return { client, transport }
}

/** The text of a tool result's first content. */
export const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as { type: string; text: string }[])[0]!.text
