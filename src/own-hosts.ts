/**
 * The names a local server answers to: loopback names, the address it is bound to (and, bound to every interface,
 * this machine's own addresses and name), and names the user allows. A request whose `Host` names anything else was
 * sent to another name that resolves here: DNS rebinding, a web page reaching a local service through the browser.
 */
import { hostname, networkInterfaces } from 'node:os';

export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** A loopback name: the fixed ones, `*.localhost` (browsers resolve it to loopback) and 127.0.0.0/8. */
export function isLoopbackName(name: string): boolean {
  return LOOPBACK_NAMES.includes(name) || name.endsWith('.localhost') || isLoopback(name);
}

/** A loopback address (a socket's peer): 127.0.0.0/8, ::1, and their IPv4-mapped forms. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.toLowerCase().replace(/^::ffff:/, '');
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
}

export interface OwnHosts {
  /** Whether a host name (no port, no brackets) is this server's. */
  allows(name: string): boolean;
  /** The names allowed, for messages. */
  readonly names: readonly string[];
}

/** `allow` may hold `*` (any name: the check is off). */
export function ownHosts(opts: { bound?: string | undefined; allow?: readonly string[] | undefined } = {}): OwnHosts {
  const names = new Set(LOOPBACK_NAMES);
  const bound = opts.bound === undefined ? undefined : bareHostname(opts.bound);
  if (bound === '0.0.0.0' || bound === '::') {
    names.add(hostname().toLowerCase());
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.address.toLowerCase());
  } else if (bound !== undefined && bound !== '') names.add(bound);
  for (const a of opts.allow ?? []) names.add(bareHostname(a));
  const any = names.has('*');
  return {
    allows: (name) => any || names.has(name) || isLoopbackName(name),
    names: [...names],
  };
}

/** A `Host` header or URL host as a bare lower-case name: `[::1]:8787` -> `::1`, `Example.com:80` -> `example.com`. */
export function bareHostname(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') === -1 ? undefined : h.indexOf(']'));
  const colon = h.indexOf(':');
  return colon === -1 || h.indexOf(':', colon + 1) !== -1 ? h : h.slice(0, colon);
}
