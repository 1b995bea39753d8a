/**
 * A loopback TCP relay in front of a real server (the throwaway PostgreSQL) that can be frozen: from `freeze()` on,
 * it forwards nothing either way and keeps every connection open, and a new connection is accepted and left
 * waiting, as a database that stops answering without closing does (a SIGSTOPped server, a silent network). The
 * server behind it is untouched, so the test run's shared cluster can stand behind it.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface FreezableRelay {
  /** `url` (a postgres:// URL of the real server) pointed at the relay. */
  via(url: string): string;
  freeze(): void;
  close(): Promise<void>;
}

export async function startFreezableRelay(target: { host: string; port: number }): Promise<FreezableRelay> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const keep = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };
  const server = createServer((client) => {
    keep(client);
    if (frozen) return; // accepted, never answered
    const up = connect(target.port, target.host);
    keep(up);
    client.on('data', (d) => void (frozen || up.write(d)));
    up.on('data', (d) => void (frozen || client.write(d)));
    // A side that closes while the relay is not frozen closes the other; frozen, nothing moves.
    client.on('close', () => frozen || up.destroy());
    up.on('close', () => frozen || client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    freeze() {
      frozen = true;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
