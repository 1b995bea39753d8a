/**
 * The one check that a request to a local tapedeck server (the proxy, the viewer) is addressed to it by one of its
 * own names (`own-hosts.ts`): otherwise a web page whose name rebinds to 127.0.0.1 could drive a recording (tapedeck
 * rewrites `Host` to the upstream's, which would defeat the upstream's own check), read a replay or the viewer's
 * tapes. A browser's `Origin`, when sent, must name one of those hosts too. A refusal is a `FORBIDDEN` error (403)
 * that says which header was wrong.
 *
 * The proxy accepts any port in `Host` and `Origin` (a local app may call it from another port); the viewer, which
 * serves its own pages, asks for its port in `Host`, its own origin in `Origin` and no cross-site `Sec-Fetch-Site`.
 */
import { TapedeckError } from './errors.js';
import { bareHostname, type OwnHosts } from './own-hosts.js';

export interface HostCheck {
  own: OwnHosts;
  /** The server in messages (`this viewer`). Default: "one of tapedeck's own names" (the proxy). */
  who?: string;
  /** The port `Host` must carry; any port when undefined. */
  port?: number;
  /** `Origin` must be `http://` + the `Host` asked for, and `Sec-Fetch-Site` same-origin or none (a server of its own pages). */
  sameOrigin?: boolean;
}

/** The headers the check reads (lower-case names, as node and hono give them). */
export interface GuardedHeaders {
  host?: string | undefined;
  origin?: string | undefined;
  'sec-fetch-site'?: string | undefined;
}

/** Why `headers` are refused, or undefined when the request is addressed to this server. */
export function hostRefusal(headers: GuardedHeaders, opts: HostCheck): TapedeckError | undefined {
  const check: HostCheck & { who: string } = Object.assign({}, opts, { who: opts.who ?? "one of tapedeck's own names" });
  const host = headers.host;
  if (check.port !== undefined ? !hostWithPort(host ?? '', check) : host !== undefined && !check.own.allows(bareHostname(host))) {
    const expected =
      check.port === undefined ? check.own.names.join(', ') : check.own.names.map((n) => withPort(n, check.port!)).join(', ');
    return forbidden(`Host "${host ?? ''}" is not ${check.who} (expected ${expected})`, check, REBINDING);
  }
  const origin = headers.origin;
  if (origin !== undefined) {
    if (check.sameOrigin === true) {
      if (origin !== `http://${(host ?? '').toLowerCase()}`)
        return forbidden(`Origin "${origin}" is not ${check.who} (http://${host ?? ''})`, check, CROSS_SITE);
    } else if (!check.own.allows(originName(origin) ?? '\0')) {
      return forbidden(`Origin "${origin}" is not ${check.who} (${check.own.names.join(', ')})`, check, CROSS_SITE);
    }
  }
  const site = headers['sec-fetch-site'];
  if (check.sameOrigin === true && site !== undefined && site !== 'same-origin' && site !== 'none')
    return forbidden(`Sec-Fetch-Site "${site}" is not ${check.who}'s own page`, check, CROSS_SITE);
  return undefined;
}

function hostWithPort(host: string, check: HostCheck): boolean {
  const name = bareHostname(host);
  return host.trim().toLowerCase() === withPort(name, check.port!) && check.own.allows(name);
}

function withPort(name: string, port: number): string {
  return `${name.includes(':') ? `[${name}]` : name}:${port}`;
}

function originName(origin: string): string | undefined {
  if (origin === 'null') return undefined;
  try {
    return bareHostname(new URL(origin).host);
  } catch {
    return undefined;
  }
}

const REBINDING = 'a page on another site could reach it through a name that resolves here (DNS rebinding)';
const CROSS_SITE = 'a page on another site must not drive it through the browser';

function forbidden(what: string, check: HostCheck, why: string): TapedeckError {
  const hint = check.sameOrigin === true ? 'Open the URL tapedeck printed.' : "Allow more host names in the config's allowHosts.";
  return new TapedeckError('FORBIDDEN', `tapedeck: ${what}: refused, as ${why}. ${hint}`);
}
