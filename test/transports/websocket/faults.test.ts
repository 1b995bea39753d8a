/**
 * A fault on a WebSocket session (`then: {close}`): a replayed Realtime session (the compatibility tape recorded from a
 * scripted Realtime server) is closed with the rule's code after N server messages; the replay tape notes the fault.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../../src/engine/faults/fault-plan.js';
import { parseFaultRule } from '../../../src/engine/faults/fault-rules.js';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import { copyCompatTapes } from '../../fixtures/compat/compat.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-faults-'));
  copyCompatTapes(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('faults on WebSocket sessions', () => {
  it('closes a replayed Realtime session with the code after the first server message', async () => {
    const rule = parseFaultRule('{when: {api: openai}, then: {close: {code: 1011, reason: overloaded, afterMessages: 1}}}');
    const proxy = await startProxy({
      mode: 'replay',
      tape: 'realtime',
      dir,
      port: 0,
      routes: [],
      saveAs: 'realtime-closed',
      faults: createFaultPlan([rule]),
      log: createLogger('silent'),
    });
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`, 'realtime');
    const got: string[] = [];
    ws.on('message', (d: Buffer) => got.push((JSON.parse(d.toString()) as { type: string }).type));
    const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await proxy.close();
    expect(got).toEqual(['session.created']);
    expect(closed).toEqual({ code: 1011, reason: 'overloaded' });
    const out = await createDirStore(dir).load('realtime-closed');
    const session = out.exchanges[0]!;
    expect(session.notes?.fault).toBe('#1 openai -> close 1011');
    expect(session.websocket?.frames.filter((f) => f.from === 'server').map((f) => f.kind)).toEqual(['text', 'close']);
  });
});
