/**
 * An MCP server built with the official TypeScript SDK (`McpServer` over its `StreamableHTTPServerTransport`, one
 * session per client), in this process on port 0 of 127.0.0.1, with tools that exercise what a deployed server does:
 * - `book {place}` asks the client to confirm (`elicitation/create`, a form with `confirm: boolean`) and answers
 *   `booked PLACE` when the client accepted with `confirm: true`, `not booked (ACTION)` otherwise;
 * - `echo {text}` answers its text;
 * - `write {text}` answers `wrote TEXT` (with `auth`, it needs the `mcp:write` scope: a 403 `insufficient_scope`
 *   without it, from the SDK's bearer middleware).
 * With `auth`, the SDK's own bearer middleware guards the endpoint: a token the authorization server issued for this
 * server's URL (RFC 8707), checked by asking that server (`verify`); and the server publishes its protected-resource
 * metadata (RFC 9728) naming the authorization server, with the SDK's metadata router.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';

/** Express, as the SDK's auth middleware needs it (the SDK depends on it; typed here as far as these helpers use it). */
export type ExpressApp = {
  use(...handlers: unknown[]): void;
  post(path: string, ...handlers: unknown[]): void;
  get(path: string, ...handlers: unknown[]): void;
  delete(path: string, ...handlers: unknown[]): void;
  all(path: string, ...handlers: unknown[]): void;
  listen(port: number, host: string, cb: () => void): Server;
};
type Express = (() => ExpressApp) & { json(): unknown; urlencoded(o?: unknown): unknown };
export const express = createRequire(import.meta.url)('express') as Express;

export interface SdkMcpServer {
  /** The MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** The texts `write` was called with, in order (the side effect a test checks the real tool for). */
  written: string[];
  stop(): Promise<void>;
}

export interface SdkMcpServerOptions {
  /** Guard the endpoint with the SDK's bearer middleware: tokens checked by `verifier`, issued by the server `metadata` describes. */
  auth?: { metadata: OAuthMetadata; verifier: OAuthTokenVerifier; scopes: string[] };
}

interface Req {
  headers: Record<string, string | undefined>;
  body: unknown;
  auth?: { scopes: string[] };
}
interface Res {
  status(n: number): Res;
  json(v: unknown): void;
  set(k: string, v: string): void;
  headersSent: boolean;
}

function mcpServer(written: string[]): McpServer {
  const server = new McpServer({ name: 'deployed-test-server', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echo the text', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('write', { description: 'Write the text', inputSchema: { text: z.string() } }, ({ text }) => {
    written.push(text);
    return { content: [{ type: 'text', text: `wrote ${text}` }] };
  });
  server.registerTool(
    'book',
    { description: 'Book a place, once the user confirms', inputSchema: { place: z.string() } },
    async ({ place }) => {
      const answer = await server.server.elicitInput({
        message: `Book ${place}?`,
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm' } }, required: ['confirm'] },
      });
      const booked = answer.action === 'accept' && (answer.content as { confirm?: unknown } | undefined)?.confirm === true;
      return { content: [{ type: 'text', text: booked ? `booked ${place}` : `not booked (${answer.action})` }] };
    },
  );
  return server;
}

export async function startSdkMcpServer(opts: SdkMcpServerOptions = {}): Promise<SdkMcpServer> {
  const app = express();
  // Listening first: the routes need the server's own URL (its resource, for the bearer middleware and the metadata).
  const http = createServer(app as never);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const prm = url.replace(/\/mcp$/, '/.well-known/oauth-protected-resource/mcp');
  app.use(express.json());
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const written: string[] = [];
  const handle = async (req: Req, res: Res): Promise<void> => {
    const sid = req.headers['mcp-session-id'];
    let transport = sid === undefined ? undefined : sessions.get(sid);
    if (transport === undefined) {
      if (sid !== undefined)
        return void res.status(404).json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
      const made = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, made),
      });
      transport = made;
      await mcpServer(written).connect(made);
    }
    await transport.handleRequest(req as never, res as never, req.body);
  };
  const guards: unknown[] = [];
  if (opts.auth !== undefined) {
    const { verifier, metadata, scopes } = opts.auth;
    app.use(mcpAuthMetadataRouter({ oauthMetadata: metadata, resourceServerUrl: new URL(url), scopesSupported: scopes }));
    guards.push(requireBearerAuth({ verifier, requiredScopes: ['mcp:tools'], resourceMetadataUrl: prm, expectedResource: new URL(url) }));
    // `write` needs more than the base scope: 403 insufficient_scope with the scope to ask for (step-up).
    guards.push((req: Req, res: Res, next: () => void) => {
      const body = req.body as { method?: string; params?: { name?: string } } | undefined;
      if (body?.method !== 'tools/call' || body.params?.name !== 'write' || req.auth?.scopes.includes('mcp:write') === true) return next();
      res.set('WWW-Authenticate', `Bearer error="insufficient_scope", scope="mcp:tools mcp:write", resource_metadata="${prm}"`);
      res.status(403).json({ error: 'insufficient_scope', error_description: 'write needs mcp:write' });
    });
  }
  app.all('/mcp', ...guards, (req: Req, res: Res) => void handle(req, res));
  return {
    url,
    written,
    async stop() {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
