/**
 * A tape holds no keys: its credential headers (and query parameters) read `[REDACTED]`. Drift puts a key back
 * where the recording had one, from the environment variable the provider's SDKs read (each adapter says which,
 * `ProviderAdapter.credentials`), or from the variable `--key ROUTE=VAR` names for a route, and only when the call
 * goes where that key may go (`key-hosts.ts`): otherwise the call is sent without it, and said so. A redacted header
 * no variable covers is left out (and said so); a variable that is not set is reported before anything is sent. A
 * provider that signs its requests (`providers/signing.ts`) gets its signature headers made anew as the call leaves:
 * drift leaves them out without a word.
 */
import { adapterFor } from '../providers/registry.js';
import type { ApiCredential } from '../providers/types.js';
import { REDACTED } from '../tape/redaction/redact.js';
import type { Exchange, Route } from '../tape/schema.js';
import { keyDestination, type KeyDestinations } from './key-hosts.js';

/** A call to fill: its recorded exchange in, what to send out (a `PlannedCall`). */
export interface CallToFill {
  exchange: Exchange;
  /** The route the call goes on, its upstream resolved (`--route` over the recording). */
  route: Route;
  headers: Record<string, string>;
  query: [string, string][];
  /** The header and query names drift filled (so what is kept of the call can show them redacted again). */
  filled: { headers: string[]; query: string[] };
  /** The origin the keys drift filled may go to (set when it filled one): `send.ts` checks the URL against it. */
  keysTo?: string;
}

export interface CredentialNeeds {
  /** Variables that must be set (`OPENAI_API_KEY`, or `GEMINI_API_KEY or GOOGLE_API_KEY`), with the calls that need them. */
  missing: { variable: string; route: string; calls: number }[];
  /** Redacted headers / query parameters no variable covers: not sent. */
  dropped: { route: string; name: string }[];
  /** Keys not sent because the call goes elsewhere than where they may go, per route and host, with why. */
  withheld: { route: string; host: string; names: string[]; reason: string }[];
}

/** Fill each call's `headers` and `query` (what is sent) and say what could not be filled. */
export function credentialsFor(
  calls: readonly CallToFill[],
  opts: {
    env: NodeJS.ProcessEnv;
    keys: Readonly<Record<string, string>>;
    destinations: KeyDestinations;
    /** Gets every key value filled (for drift to keep out of what it writes). */
    filledValues?: Set<string>;
  },
): CredentialNeeds {
  const missing = new Map<string, { variable: string; route: string; calls: number }>();
  const dropped = new Map<string, { route: string; name: string }>();
  const withheld = new Map<string, { route: string; host: string; names: string[]; reason: string }>();
  const need = (variable: string, route: string): void => {
    const k = `${variable}\n${route}`;
    const m = missing.get(k) ?? { variable, route, calls: 0 };
    m.calls++;
    missing.set(k, m);
  };
  for (const call of calls) {
    const ex = call.exchange;
    const adapter = adapterFor(ex.llm?.api);
    const ways = adapter?.credentials ?? [];
    const signature = adapter?.provider?.signer?.signatureHeaders ?? [];
    const keyVar = opts.keys[ex.route];
    const label = (name: string, where: 'header' | 'query'): string => (where === 'query' ? `?${name}` : name);
    /** Whether a key for `name` may go where this call goes; noted as withheld when not. */
    const mayGo = (name: string, where: 'header' | 'query', way: ApiCredential | undefined): boolean => {
      const verdict = keyDestination(ex, call.route, way, opts.destinations);
      if (verdict.ok) {
        call.keysTo = verdict.origin;
        return true;
      }
      const k = `${ex.route}\n${verdict.host}`;
      const w = withheld.get(k) ?? { route: ex.route, host: verdict.host, names: [], reason: verdict.reason };
      if (!w.names.includes(label(name, where))) w.names.push(label(name, where));
      withheld.set(k, w);
      return false;
    };
    const fill = (name: string, where: 'header' | 'query'): string | undefined => {
      if (keyVar !== undefined) {
        if (!mayGo(name, where, undefined)) return undefined;
        const v = opts.env[keyVar];
        if (v === undefined || v === '') {
          need(keyVar, ex.route);
          return undefined;
        }
        opts.filledValues?.add(v);
        return where === 'header' && name === 'authorization' && !/\s/.test(v) ? `Bearer ${v}` : v;
      }
      const way = ways.find((w) => (where === 'header' ? w.header === name : w.query === name));
      if (way === undefined) {
        dropped.set(`${ex.route}\n${name}`, { route: ex.route, name: label(name, where) });
        return undefined;
      }
      if (!mayGo(name, where, way)) return undefined;
      const v = valueOf(way, opts.env);
      if (v === undefined) {
        need(way.env.join(' or '), ex.route);
        return undefined;
      }
      opts.filledValues?.add(v);
      return where === 'header' && way.scheme === 'bearer' ? `Bearer ${v}` : v;
    };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(ex.request.headers)) {
      if (value !== REDACTED) {
        headers[name] = value;
        continue;
      }
      if (signature.includes(name)) continue;
      const v = fill(name, 'header');
      if (v === undefined) continue;
      headers[name] = v;
      call.filled.headers.push(name);
    }
    const query: [string, string][] = [];
    for (const [name, value] of ex.request.query) {
      if (value !== REDACTED) {
        query.push([name, value]);
        continue;
      }
      const v = fill(name, 'query');
      if (v === undefined) continue;
      query.push([name, v]);
      call.filled.query.push(name);
    }
    call.headers = headers;
    call.query = query;
  }
  return { missing: [...missing.values()], dropped: [...dropped.values()], withheld: [...withheld.values()] };
}

function valueOf(way: ApiCredential, env: NodeJS.ProcessEnv): string | undefined {
  for (const name of way.env) {
    const v = env[name];
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

/** One line for the variables that are not set: what to set, for which calls. */
export function missingLine(needs: CredentialNeeds): string | undefined {
  if (needs.missing.length === 0) return undefined;
  const parts = needs.missing.map((m) => `${m.variable} (${m.calls} call(s) on ${m.route})`);
  return `drift needs ${parts.join(', ')}: the tape holds no keys; set ${needs.missing.length === 1 ? 'it' : 'them'} in the environment, or name another variable with --key ROUTE=VAR`;
}
