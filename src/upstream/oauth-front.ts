/**
 * Record (and a replay's live forwards): tapedeck stands in for an OAuth-protected MCP server and its authorization
 * server on a route (`http/oauth-mount.ts` says how the URLs map). For each request going live:
 * - the flow's own requests (the protected-resource metadata, the authorization server's metadata and endpoints under
 *   the route's `/.oauth`) go to the real server they stand for, with the `resource` parameter (RFC 8707) the client
 *   sent for tapedeck's URL translated back to the real resource;
 * - what comes back shows the client tapedeck's URLs: the challenge's `resource_metadata`, the metadata documents'
 *   URLs (`resource`, `authorization_servers`, `issuer`, the endpoints), a redirect's `Location` on the servers' origins
 *   and its `iss` (RFC 9207).
 * The tape keeps what the real servers saw and said. What the flow taught tapedeck of a route (where its metadata is,
 * its resource and authorization server) is kept per session, here.
 */
import { bearerChallenge, resourceMetadataOf } from '../providers/oauth.js';
import { clientOrigin, OAUTH_MOUNT, OAuthMount, type OAuthSite, type OAuthTarget } from '../http/oauth-mount.js';
import { overSink, type ResponseSink } from '../http/sink.js';
import type { ProxyRequest } from '../http/types.js';
import type { HeaderMap, Route } from '../tape/schema.js';
import { parseJson } from '../tape/json-depth.js';

/** JSON documents of the flow are small; a larger body passes through unread. */
const MAX_DOCUMENT_BYTES = 1 << 20;

export class OAuthFront {
  private readonly sites = new Map<string, OAuthSite>();

  /** What tapedeck knows of a route's OAuth so far. */
  site(route: Route): OAuthSite {
    let site = this.sites.get(route.prefix);
    if (site === undefined || site.route.upstream !== route.upstream) {
      site = { route };
      this.sites.set(route.prefix, site);
    }
    return site;
  }

  /** The request as the real servers must see it, and the sink that shows the client tapedeck's URLs. */
  front(req: ProxyRequest, sink: ResponseSink): { req: ProxyRequest; sink: ResponseSink } {
    const routed = this.route(req);
    return { req: routed.req, sink: routed.sink(sink) };
  }

  /**
   * The request as the real servers must see it (what the tape records), and how its answer's sink is wrapped to show
   * the client tapedeck's URLs.
   */
  route(req: ProxyRequest): OAuthRouted {
    // A forward proxy's route is an origin: the client already talks to the real URLs.
    if (!req.route.prefix.startsWith('/')) return { req, sink: (sink) => sink };
    const site = this.site(req.route);
    // The hot path (every request recorded): most are no part of the flow; their answer is looked at for a challenge.
    const flow = req.path.startsWith('/.well-known/') || req.path.startsWith(OAUTH_MOUNT);
    const target = flow ? new OAuthMount(site, clientOrigin(req.headers)).target(req.path) : undefined;
    if (target === undefined) return { req, sink: (sink) => new ChallengeSink(sink, site, req.headers) };
    const mount = new OAuthMount(site, clientOrigin(req.headers));
    return { req: translated(req, target, mount), sink: (sink) => documentSink(sink, site, mount.base, target) };
  }
}

/** A request going live through a route: as the real servers see it, and its answer's sink for the client. */
export interface OAuthRouted {
  req: ProxyRequest;
  sink(sink: ResponseSink): ResponseSink;
}

/**
 * A protected resource's challenge names tapedeck's metadata URL; the real one is learned. Every request going live
 * passes through one (a class: one small object per request, its methods shared).
 */
class ChallengeSink implements ResponseSink {
  constructor(
    private readonly sink: ResponseSink,
    private readonly site: OAuthSite,
    private readonly asked: HeaderMap,
  ) {}
  head(status: number, headers: HeaderMap): void {
    const challenge = status === 401 || status === 403 ? headers['www-authenticate'] : undefined;
    const url = challenge === undefined ? undefined : bearerChallenge(challenge)?.resource_metadata;
    if (challenge === undefined || url === undefined) return this.sink.head(status, headers);
    this.site.metadataUrl = url;
    this.sink.head(status, {
      ...headers,
      'www-authenticate': new OAuthMount(this.site, clientOrigin(this.asked)).challengeToClient(challenge),
    });
  }
  write(chunk: Uint8Array): boolean {
    return this.sink.write(chunk);
  }
  onDrain(cb: () => void): void {
    this.sink.onDrain(cb);
  }
  end(): void {
    this.sink.end();
  }
  hold(): void {
    this.sink.hold?.();
  }
  cut(): void {
    this.sink.cut();
  }
  onClose(cb: () => void): void {
    this.sink.onClose(cb);
  }
}

/** The request to the real server: its origin and path, and the `resource` it names translated back. */
function translated(req: ProxyRequest, target: OAuthTarget, mount: OAuthMount): ProxyRequest {
  const q = target.path.indexOf('?');
  const path = q === -1 ? target.path : target.path.slice(0, q);
  const own = q === -1 ? [] : [...new URLSearchParams(target.path.slice(q + 1))];
  let changed = false;
  const query = [...own, ...req.query].map(([k, v]): [string, string] => {
    if (k !== 'resource') return [k, v];
    const real = mount.toUpstream(v);
    changed ||= real !== v;
    return [k, real];
  });
  const { meaning: _computed, rawQuery, ...rest } = req;
  const out: ProxyRequest = { ...rest, route: { prefix: req.route.prefix, upstream: target.origin }, path, query };
  if (!changed && own.length === 0 && rawQuery !== undefined) out.rawQuery = rawQuery;
  if ((req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') && req.large === undefined) {
    const form = new URLSearchParams(req.body.toString('utf8'));
    const resource = form.getAll('resource');
    if (resource.length > 0) {
      form.delete('resource');
      for (const r of resource) form.append('resource', mount.toUpstream(r));
      out.body = Buffer.from(form.toString());
    }
  }
  return out;
}

/** A document of the flow, or an authorization server's answer: its URLs and redirect shown as tapedeck's. */
function documentSink(sink: ResponseSink, site: OAuthSite, base: string, target: OAuthTarget): ResponseSink {
  let held: Buffer[] | undefined;
  let size = 0;
  let head: { status: number; headers: HeaderMap } | undefined;
  const mount = (): OAuthMount => new OAuthMount(site, base);
  const release = (): void => {
    if (head !== undefined) sink.head(head.status, head.headers);
    for (const c of held ?? []) sink.write(c);
    held = undefined;
  };
  return overSink(sink, {
    head(status, headers) {
      const shown = withLocation(headers, mount(), target);
      const json = /\bjson\b/.test(headers['content-type'] ?? '') && headers['content-encoding'] === undefined;
      if (!json) return sink.head(status, shown);
      held = [];
      head = { status, headers: shown };
    },
    write(chunk) {
      if (held === undefined) return sink.write(chunk);
      held.push(Buffer.from(chunk));
      size += chunk.byteLength;
      if (size > MAX_DOCUMENT_BYTES) release();
      return true;
    },
    end() {
      if (held !== undefined && head !== undefined) {
        const text = Buffer.concat(held).toString('utf8');
        const out = rewriteDocument(text, site, base, target);
        held = [Buffer.from(out)];
        const headers = { ...head.headers };
        if (headers['content-length'] !== undefined) headers['content-length'] = String(Buffer.byteLength(out));
        head = { status: head.status, headers };
      }
      release();
      sink.end();
    },
    cut() {
      release();
      sink.cut();
    },
  });
}

/** The JSON document with the flow's URLs shown as tapedeck's (protected-resource metadata first teaches the route). */
function rewriteDocument(text: string, site: OAuthSite, base: string, target: OAuthTarget): string {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch {
    return text;
  }
  if (target.kind === 'resource-metadata') {
    const meta = resourceMetadataOf({ response: { status: 200, headers: {}, body: { kind: 'json', json } } });
    if (meta?.resource !== undefined) site.resource = meta.resource;
    if (meta?.authorizationServers[0] !== undefined) site.issuer = meta.authorizationServers[0];
  }
  const mount = new OAuthMount(site, base);
  return JSON.stringify(mount.jsonToClient(json));
}

/** A redirect on the servers' origins goes through tapedeck; one to the client (its `redirect_uri`) keeps its place, with its `iss` shown as tapedeck's. */
function withLocation(headers: HeaderMap, mount: OAuthMount, target: OAuthTarget): HeaderMap {
  const location = headers.location;
  if (location === undefined) return headers;
  let url: URL;
  try {
    url = new URL(location, `${target.origin}${target.path}`);
  } catch {
    return headers;
  }
  const shown = mount.toClient(url.toString());
  if (shown !== url.toString()) return { ...headers, location: shown };
  const iss = url.searchParams.get('iss');
  if (iss === null || mount.toClient(iss) === iss) return headers;
  url.searchParams.set('iss', mount.toClient(iss));
  return { ...headers, location: url.toString() };
}
