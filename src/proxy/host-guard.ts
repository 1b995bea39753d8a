/**
 * The proxy answers only requests addressed to it by one of its own names (`own-hosts.ts`), in record and replay:
 * otherwise a web page whose name rebinds to 127.0.0.1 could drive a recording (tapedeck rewrites `Host` to the
 * upstream's, which would defeat the upstream's own check) or read a replay. A browser's `Origin`, when sent, must
 * name one of those hosts too (any port: a local app may call the proxy from another port). A refusal is a 403 that
 * says which header was wrong.
 */
import { TapedeckError } from '../errors.js';
import { bareHostname, type OwnHosts } from '../own-hosts.js';
import type { HeaderMap } from '../tape/schema.js';

export function hostRefusal(own: OwnHosts, headers: HeaderMap): TapedeckError | undefined {
  const host = headers.host;
  if (host !== undefined && !own.allows(bareHostname(host))) {
    return forbidden(`Host "${host}" is not one of tapedeck's own names`, own);
  }
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  let name: string | undefined;
  try {
    name = origin === 'null' ? undefined : bareHostname(new URL(origin).host);
  } catch {
    name = undefined;
  }
  if (name === undefined || !own.allows(name)) return forbidden(`Origin "${origin}" is not one of tapedeck's own names`, own);
  return undefined;
}

function forbidden(what: string, own: OwnHosts): TapedeckError {
  return new TapedeckError(
    'FORBIDDEN',
    `tapedeck: ${what} (${own.names.join(', ')}): refused, as a page on another site could reach it through a name that resolves here (DNS rebinding). Allow more host names in the config's allowHosts.`,
  );
}
