/**
 * The official TypeScript SDK client through an OAuth flow, as an agent runs it: connect, get a 401, discover, register,
 * authorize (the in-memory provider's "browser"), exchange the code, connect again with the token, call tools; a
 * `write` that answers 403 `insufficient_scope` makes it authorize again with the wider scope (step-up) and retry.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryOAuthClient } from '../../helpers/oauth-servers.js';

export interface FlowResult {
  echo: string;
  write?: string;
  /** The secrets this client was given or made (codes, verifier, tokens, its client secret). */
  seen: string[];
}

/** Run `op` on a connected client; on `UnauthorizedError` (the flow ended in a redirect) finish it with the code and retry once. */
async function authorized<T>(
  provider: InMemoryOAuthClient,
  transport: () => StreamableHTTPClientTransport,
  op: (c: Client) => Promise<T>,
): Promise<T> {
  let t = transport();
  let client = new Client({ name: 'oauth-agent', version: '1' });
  try {
    await client.connect(t);
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    await t.finishAuth(provider.code as string);
    t = transport();
    client = new Client({ name: 'oauth-agent', version: '1' });
    await client.connect(t);
  }
  try {
    try {
      return await op(client);
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
      // Step-up: the flow ran again for the wider scope and ended in a redirect.
      await t.finishAuth(provider.code as string);
      return await op(client);
    }
  } finally {
    await client.close();
  }
}

export async function runSdkFlow(url: string, opts: { write?: boolean } = {}): Promise<FlowResult> {
  // Step-up needs a client without refresh tokens (the SDK refreshes, keeping the scope, when it has one).
  const provider = new InMemoryOAuthClient({ keepRefresh: opts.write !== true });
  const transport = (): StreamableHTTPClientTransport => new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const text = (r: unknown): string => ((r as { content: { text: string }[] }).content[0]?.text ?? '') as string;
  const echo = await authorized(provider, transport, async (c) => text(await c.callTool({ name: 'echo', arguments: { text: 'hello' } })));
  const out: FlowResult = { echo, seen: provider.seen };
  if (opts.write === true)
    out.write = await authorized(provider, transport, async (c) => text(await c.callTool({ name: 'write', arguments: { text: 'note' } })));
  return out;
}
