/** The URLs of an OAuth flow as a client of a route sees them, and back. */
import { describe, expect, it } from 'vitest';
import { clientChallenge, OAuthMount } from '../../src/http/oauth-mount.js';

const route = { prefix: '/remote/mcp', upstream: 'https://mcp.example.com/mcp' };
const site = {
  route,
  resource: 'https://mcp.example.com/mcp',
  metadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
  issuer: 'https://auth.example.com/tenant1',
};
const mount = new OAuthMount(site, 'http://127.0.0.1:8787');

describe('OAuthMount', () => {
  it('shows the client tapedeck in place of the resource, its metadata and the authorization server', () => {
    expect(mount.toClient('https://mcp.example.com/mcp')).toBe('http://127.0.0.1:8787/remote/mcp');
    expect(mount.toClient('https://mcp.example.com/mcp/')).toBe('http://127.0.0.1:8787/remote/mcp');
    expect(mount.toClient(site.metadataUrl)).toBe('http://127.0.0.1:8787/.well-known/oauth-protected-resource/remote/mcp');
    expect(mount.toClient('https://auth.example.com/tenant1')).toBe('http://127.0.0.1:8787/remote/mcp/.oauth/tenant1');
    expect(mount.toClient('https://auth.example.com/authorize?x=1')).toBe('http://127.0.0.1:8787/remote/mcp/.oauth/authorize?x=1');
    expect(mount.toClient('https://auth.example.com/.well-known/oauth-authorization-server/tenant1')).toBe(
      'http://127.0.0.1:8787/.well-known/oauth-authorization-server/remote/mcp/.oauth/tenant1',
    );
    // Not the flow's: the client's own redirect URI, another site.
    expect(mount.toClient('http://localhost:3999/callback')).toBe('http://localhost:3999/callback');
    expect(mount.toClient('https://auth.example.org/x')).toBe('https://auth.example.org/x');
  });

  it('an issuer with and without its trailing slash stays as written (clients compare issuers as strings)', () => {
    const bare = new OAuthMount({ ...site, issuer: 'https://auth.example.com' }, 'http://h:1');
    expect(bare.toClient('https://auth.example.com')).toBe('http://h:1/remote/mcp/.oauth');
    expect(bare.toClient('https://auth.example.com/')).toBe('http://h:1/remote/mcp/.oauth/');
  });

  it('translates what the client names back: the resource it was shown is the real one (RFC 8707)', () => {
    expect(mount.toUpstream('http://127.0.0.1:8787/remote/mcp')).toBe('https://mcp.example.com/mcp');
    expect(mount.toUpstream('http://127.0.0.1:8787/remote/mcp/')).toBe('https://mcp.example.com/mcp');
    expect(mount.toUpstream('http://127.0.0.1:8787/remote/mcp/.oauth/token')).toBe('https://auth.example.com/token');
    expect(mount.toUpstream('http://127.0.0.1:8787/remote/mcpx')).toBe('http://127.0.0.1:8787/remote/mcpx');
    expect(mount.toUpstream('https://elsewhere.example/')).toBe('https://elsewhere.example/');
  });

  it('says where a request of the flow goes', () => {
    expect(mount.target('/.well-known/oauth-protected-resource')).toEqual({
      origin: 'https://mcp.example.com',
      path: '/.well-known/oauth-protected-resource/mcp',
      kind: 'resource-metadata',
    });
    expect(mount.target('/.well-known/oauth-authorization-server/.oauth/tenant1')).toEqual({
      origin: 'https://auth.example.com',
      path: '/.well-known/oauth-authorization-server/tenant1',
      kind: 'server-metadata',
    });
    expect(mount.target('/.oauth/tenant1/.well-known/openid-configuration')).toMatchObject({
      path: '/tenant1/.well-known/openid-configuration',
      kind: 'server-metadata',
    });
    expect(mount.target('/.oauth/token')).toEqual({ origin: 'https://auth.example.com', path: '/token', kind: 'server' });
    expect(mount.target('/')).toBeUndefined();
    expect(mount.target('/.oauthx')).toBeUndefined();
  });

  it('without protected-resource metadata yet, the metadata is looked for at its well-known place', () => {
    const fresh = new OAuthMount({ route }, 'http://h:1');
    expect(fresh.target('/.well-known/oauth-protected-resource')).toMatchObject({
      origin: 'https://mcp.example.com',
      path: '/.well-known/oauth-protected-resource/mcp',
    });
    expect(fresh.target('/.oauth/token')).toBeUndefined();
  });

  it("a challenge's resource_metadata names tapedeck's metadata for the route; the rest stays", () => {
    const header =
      'Bearer error="invalid_token", scope="mcp:tools", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';
    expect(clientChallenge(header, 'http://h:1', '/remote/mcp')).toBe(
      'Bearer error="invalid_token", scope="mcp:tools", resource_metadata="http://h:1/.well-known/oauth-protected-resource/remote/mcp"',
    );
    expect(clientChallenge('Bearer resource_metadata=https://x/y, scope="a"', 'http://h:1', '/r')).toBe(
      'Bearer resource_metadata="http://h:1/.well-known/oauth-protected-resource/r", scope="a"',
    );
  });

  it('JSON documents: every URL of the flow shown as tapedeck’s, others untouched', () => {
    expect(
      mount.jsonToClient({
        resource: 'https://mcp.example.com/mcp',
        authorization_servers: ['https://auth.example.com/tenant1'],
        redirect_uris: ['http://localhost:3999/callback'],
        n: 1,
      }),
    ).toEqual({
      resource: 'http://127.0.0.1:8787/remote/mcp',
      authorization_servers: ['http://127.0.0.1:8787/remote/mcp/.oauth/tenant1'],
      redirect_uris: ['http://localhost:3999/callback'],
      n: 1,
    });
  });
});
