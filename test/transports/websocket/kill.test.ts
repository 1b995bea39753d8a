/**
 * A recorder killed with SIGKILL in the middle of a session: every message the client had received is on the tape
 * (each server message is written before it is sent on), and the session reads as cut, not as complete.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { readTape } from '../../../src/tape/tape-reader.js';
import { spawnCli, waitForListening } from '../../helpers/cli.js';
import { startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';

let dir: string;
let ticker: WsUpstream;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-kill-'));
  // A server that streams a numbered message every 10 ms once asked to start, as audio would come.
  ticker = await startWsUpstream({
    message(conn) {
      let n = 0;
      const timer = setInterval(
        () => (conn.ws.readyState === WebSocket.OPEN ? conn.send({ type: 'tick', n: n++ }) : clearInterval(timer)),
        10,
      );
      conn.ws.on('close', () => clearInterval(timer));
    },
  });
});
afterAll(async () => {
  await ticker.close();
  rmSync(dir, { recursive: true, force: true });
});

it('kill -9 mid-session: the messages the client had received are on the tape, and the session reads as cut', async () => {
  const child = spawnCli(['record', '--tape', 'killed', '--dir', dir, '--port', '0', '--route', `/live=${ticker.url}`]);
  const url = await waitForListening(child);
  const ws = new WebSocket(`${url.replace('http', 'ws')}/live/stream`);
  const received: number[] = [];
  const closed = new Promise((r) => ws.once('close', r));
  const exited = new Promise((r) => child.once('exit', r));
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'start' })));
    ws.on('message', (d) => {
      received.push((JSON.parse(d.toString()) as { n: number }).n);
      if (received.length === 50) {
        child.kill('SIGKILL');
        resolve();
      }
    });
  });
  await exited;
  await closed;
  const tape = await readTape(path.join(dir, 'killed.jsonl'));
  const session = tape.exchanges[0]!;
  expect(session.error?.code).toBe('SESSION_CUT');
  const onTape = session.websocket!.frames.filter((f) => f.from === 'server').map((f) => (f.data as { json: { n: number } }).json.n);
  // Everything the client received (maybe a few more, written and not yet delivered), in order.
  expect(onTape.slice(0, received.length)).toEqual(received);
  expect(session.websocket!.frames[0]).toMatchObject({ from: 'client', kind: 'text', data: { kind: 'json', json: { type: 'start' } } });
});

it('SIGTERM mid-session: the session reads as cut by the stop (SHUTDOWN), not as closed by the client', async () => {
  const child = spawnCli(['record', '--tape', 'stopped', '--dir', dir, '--port', '0', '--route', `/live=${ticker.url}`]);
  const url = await waitForListening(child);
  const ws = new WebSocket(`${url.replace('http', 'ws')}/live/stream`);
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  const exited = new Promise((r) => child.once('exit', r));
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'start' })));
    ws.once('message', () => {
      child.kill('SIGTERM');
      resolve();
    });
  });
  await closed;
  await exited;
  const session = (await readTape(path.join(dir, 'stopped.jsonl'))).exchanges[0]!;
  expect(session.error?.code).toBe('SHUTDOWN');
});
