/**
 * An MCP server behind OAuth, as deployed: the SDK's bearer middleware in front of an SDK MCP server
 * (`sdk-mcp-server.ts`), and an authorization server on another port built with the SDK's `mcpAuthRouter` (metadata,
 * dynamic client registration, `/authorize` with PKCE, `/token`), whose tokens are bound to the MCP server's URL
 * (RFC 8707): a code asked for another resource gets no token, and the MCP server refuses a token issued for another.
 * Every secret the servers issue (client secrets, registration access tokens, codes, access and refresh tokens) is
 * kept in `issued`, so a test can look for each on a tape.
 *
 * And a client side: an in-memory `OAuthClientProvider` whose "browser" follows the authorization URL and takes the
 * code from the redirect, so the SDK client completes the flow without a person.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { createOAuthMetadata, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthClientMetadata, OAuthMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { express } from './sdk-mcp-server.js';
import { startSdkMcpServer, type SdkMcpServer } from './sdk-mcp-server.js';

const secret = (prefix: string): string => `${prefix}_${randomBytes(18).toString('hex')}`;

interface Issued {
  token: string;
  clientId: string;
  scopes: string[];
  resource: string | undefined;
  expiresAt: number;
}

/** An authorization server's provider that binds every token to the resource it was asked for. */
class BindingProvider implements OAuthServerProvider {
  readonly issued: string[] = [];
  private readonly clients = new Map<string, OAuthClientInformationFull>();
  private readonly codes = new Map<string, { client: string; params: AuthorizationParams }>();
  private readonly tokens = new Map<string, Issued>();
  private readonly refreshes = new Map<string, Issued>();

  constructor(
    /** The one resource tokens are issued for (the MCP server's URL). */
    private readonly resource: () => string,
    private readonly issuer: () => string,
  ) {}

  get clientsStore() {
    return {
      getClient: (id: string) => Promise.resolve(this.clients.get(id)),
      registerClient: (info: OAuthClientInformationFull) => {
        const rat = secret('rat');
        const registered = { ...info, registration_access_token: rat } as OAuthClientInformationFull;
        if (info.client_secret !== undefined) this.issued.push(info.client_secret);
        this.issued.push(rat);
        this.clients.set(info.client_id, registered);
        return Promise.resolve(registered);
      },
    };
  }

  authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: { redirect(url: string): void }): Promise<void> {
    const code = secret('code');
    this.issued.push(code);
    this.codes.set(code, { client: client.client_id, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    // RFC 9207: the issuer in the authorization response.
    target.searchParams.set('iss', this.issuer());
    res.redirect(target.toString());
    return Promise.resolve();
  }

  challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const found = this.codes.get(code);
    if (found === undefined) throw new Error('unknown code');
    return Promise.resolve(found.params.codeChallenge);
  }

  exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _verifier?: string,
    _redirect?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const found = this.codes.get(code);
    if (found === undefined || found.client !== client.client_id) throw new Error('invalid code');
    this.codes.delete(code);
    const asked = (resource ?? found.params.resource)?.href;
    if (asked !== undefined && asked.replace(/\/$/, '') !== this.resource().replace(/\/$/, ''))
      throw new Error(`not a resource of this server: ${asked}`);
    return Promise.resolve(this.issue(client.client_id, found.params.scopes ?? [], asked));
  }

  exchangeRefreshToken(client: OAuthClientInformationFull, refresh: string, scopes?: string[]): Promise<OAuthTokens> {
    const found = this.refreshes.get(refresh);
    if (found === undefined || found.clientId !== client.client_id) throw new Error('invalid refresh token');
    return Promise.resolve(this.issue(client.client_id, scopes ?? found.scopes, found.resource));
  }

  verifyAccessToken(token: string): Promise<AuthInfo> {
    const found = this.tokens.get(token);
    if (found === undefined) throw new Error('invalid token');
    return Promise.resolve({
      token,
      clientId: found.clientId,
      scopes: found.scopes,
      expiresAt: found.expiresAt,
      ...(found.resource !== undefined ? { resource: new URL(found.resource) } : {}),
    });
  }

  private issue(clientId: string, scopes: string[], resource: string | undefined): OAuthTokens {
    const grant: Issued = { token: secret('at'), clientId, scopes, resource, expiresAt: Math.floor(Date.now() / 1000) + 3600 };
    const refresh = secret('rt');
    this.tokens.set(grant.token, grant);
    this.refreshes.set(refresh, grant);
    this.issued.push(grant.token, refresh);
    return { access_token: grant.token, token_type: 'Bearer', expires_in: 3600, scope: scopes.join(' '), refresh_token: refresh };
  }
}

export interface ProtectedMcp {
  /** The MCP endpoint. */
  url: string;
  /** The authorization server's issuer URL. */
  issuer: string;
  /** Every secret the servers issued, in order. */
  issued: string[];
  stop(): Promise<void>;
}

/** Start the authorization server and the MCP server it protects, each on its own port. */
export async function startProtectedMcp(): Promise<ProtectedMcp> {
  const app = express();
  const http = createServer(app as never);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  // The MCP server starts after the authorization server, which needs its URL only once asked for a token.
  const started: { mcp?: SdkMcpServer } = {};
  const provider = new BindingProvider(
    () => started.mcp?.url ?? '',
    () => issuer,
  );
  const scopes = ['mcp:tools', 'mcp:write'];
  const off = { rateLimit: false } as const;
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(issuer),
      scopesSupported: scopes,
      authorizationOptions: off,
      tokenOptions: off,
      clientRegistrationOptions: off,
    }),
  );
  const metadata: OAuthMetadata = createOAuthMetadata({ provider, issuerUrl: new URL(issuer), scopesSupported: scopes });
  const mcp = await startSdkMcpServer({ auth: { metadata, verifier: provider, scopes } });
  started.mcp = mcp;
  return {
    url: mcp.url,
    issuer,
    issued: provider.issued,
    async stop() {
      await mcp.stop();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/**
 * An OAuth client provider kept in memory, as an agent's would be: dynamic registration, PKCE, tokens; its "browser"
 * fetches the authorization URL and reads the code from the redirect (as a user who approves at once).
 */
export class InMemoryOAuthClient implements OAuthClientProvider {
  readonly redirectUrl = 'http://localhost:3999/callback';
  /**
   * `keepRefresh: false`: an agent that does not keep refresh tokens. The SDK client meets a 403 `insufficient_scope`
   * by refreshing when it can, and a refresh keeps the scope it had; without one it authorizes again for the scope
   * the server asked for (step-up).
   */
  constructor(private readonly opts: { keepRefresh?: boolean } = {}) {}
  /** What this client was given or made: codes, verifiers, tokens, its secret (to look for on a tape). */
  readonly seen: string[] = [];
  code: string | undefined;
  private info: OAuthClientInformationFull | undefined;
  private saved: OAuthTokens | undefined;
  private verifier: string | undefined;

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'tapedeck test agent',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    };
  }

  state(): string {
    return randomUUID();
  }
  clientInformation(): OAuthClientInformationFull | undefined {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationFull): void {
    this.info = info;
    if (info.client_secret !== undefined) this.seen.push(info.client_secret);
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    const { refresh_token: _dropped, ...without } = tokens;
    this.saved = this.opts.keepRefresh === false ? without : tokens;
    this.seen.push(tokens.access_token, ...(tokens.refresh_token !== undefined ? [tokens.refresh_token] : []));
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
    this.seen.push(verifier);
  }
  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no code verifier');
    return this.verifier;
  }
  async redirectToAuthorization(url: URL): Promise<void> {
    const res = await fetch(url, { redirect: 'manual' });
    await res.arrayBuffer();
    const location = res.headers.get('location');
    if (location === null) throw new Error(`the authorization server did not redirect (status ${res.status})`);
    const back = new URL(location);
    this.code = back.searchParams.get('code') ?? undefined;
    if (this.code === undefined) throw new Error(`no code in the redirect: ${back.searchParams.get('error') ?? location}`);
    this.seen.push(this.code);
  }
}
