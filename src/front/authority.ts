/**
 * The authority of a `CONNECT` request (`host:port`), checked before anything uses it: a port from 1 to 65535, and a
 * host the WHATWG URL parser accepts as it stands (a name, an IPv4 address, or an IPv6 address in brackets; no user
 * info, path or stray characters). Anything else is refused with why, and answered 400: one malformed line must
 * never reach code that throws on it.
 */

export type Authority = { ok: true; host: string; port: number; origin: string } | { ok: false; reason: string };

const SHAPE = /^(\[[^\]]*\]|[^:[\]]+):(\d{1,5})$/;

export function parseAuthority(text: string): Authority {
  const m = SHAPE.exec(text);
  if (m === null) return { ok: false, reason: 'CONNECT needs host:port' };
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return { ok: false, reason: `port ${m[2]} is not from 1 to 65535` };
  let u: URL;
  try {
    u = new URL(`https://${m[1]}:${port}`);
  } catch {
    return { ok: false, reason: `"${m[1]}" is not a host name or address` };
  }
  // The parser reads `a/b`, `a?b`, `user@h` as a host followed by more: only a bare host may stand here.
  const samePort = Number(u.port || 443) === port;
  if (u.username !== '' || u.password !== '' || u.pathname !== '/' || u.search !== '' || u.hash !== '' || !samePort)
    return { ok: false, reason: `"${m[1]}" is not a host name or address` };
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return { ok: true, host, port, origin: u.origin };
}
