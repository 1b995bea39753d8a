/** The WebSocket session handler loaded on first use (src/transports/websocket/lazy.ts): no session is lost while it loads. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { lazySessions } from '../../../src/transports/websocket/lazy.js';
import type { SessionHandler, WsUpgrade } from '../../../src/transports/websocket/types.js';

const upgrade = (path: string): WsUpgrade => ({ path, socket: new PassThrough() }) as unknown as WsUpgrade;

function recordingHandler(): SessionHandler & { calls: string[] } {
  const calls: string[] = [];
  return { calls, handle: (up) => void calls.push(`handle ${up.path}`), closeAll: () => void calls.push('closeAll') };
}

describe('lazySessions', () => {
  it('loads once, hands every session to the handler in order, and shutdown waits for the load', async () => {
    const h = recordingHandler();
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tracked: Promise<unknown>[] = [];
    const lazy = lazySessions(
      async () => {
        loads++;
        await gate;
        return h;
      },
      createLogger('silent'),
      (work) => void tracked.push(work),
    );
    lazy.handle(upgrade('/a'));
    lazy.handle(upgrade('/b'));
    // Stopping begins while the module loads: the sessions that came meanwhile are handled, then closed.
    lazy.closeAll();
    expect(h.calls).toEqual([]);
    expect(tracked).toHaveLength(2);
    release();
    await Promise.all(tracked);
    expect(loads).toBe(1);
    expect(h.calls).toEqual(['handle /a', 'closeAll', 'handle /b', 'closeAll']);
    lazy.handle(upgrade('/c'));
    expect(h.calls.at(-1)).toBe('handle /c');
  });

  it('a module that cannot load closes the session rather than leaving it hanging', async () => {
    const tracked: Promise<unknown>[] = [];
    const lazy = lazySessions(
      () => Promise.reject(new Error('no module')),
      createLogger('silent'),
      (work) => void tracked.push(work),
    );
    const up = upgrade('/a');
    lazy.handle(up);
    await Promise.all(tracked);
    expect(up.socket.destroyed).toBe(true);
  });
});
