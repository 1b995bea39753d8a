/** The bound of one direction: paused above the high-water mark, resumed at the low one, never paused after `end`. */
import { expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { createFlow } from '../../../src/transports/websocket/flow.js';

function source(): { ws: WebSocket; calls: string[] } {
  const calls: string[] = [];
  return { ws: { pause: () => calls.push('pause'), resume: () => calls.push('resume') } as unknown as WebSocket, calls };
}

it('pauses the source while more than the high-water mark is held, resumes at the low-water mark', () => {
  const { ws, calls } = source();
  const flow = createFlow(ws, { highWater: 100, lowWater: 40 });
  const a = flow.take(60);
  expect(calls).toEqual([]);
  const b = flow.take(60);
  expect(calls).toEqual(['pause']);
  expect(flow.paused).toBe(true);
  const c = flow.take(30);
  expect(calls).toEqual(['pause']);
  a();
  a(); // a second call releases nothing more
  expect(flow.held).toBe(90);
  expect(calls).toEqual(['pause']);
  b();
  expect(flow.held).toBe(30);
  expect(calls).toEqual(['pause', 'resume']);
  c();
  expect(flow.held).toBe(0);
});

it('once the other side is gone, the source is resumed and never paused again', () => {
  const { ws, calls } = source();
  const flow = createFlow(ws, { highWater: 10, lowWater: 0 });
  flow.take(20);
  flow.end();
  expect(calls).toEqual(['pause', 'resume']);
  flow.take(100);
  expect(calls).toEqual(['pause', 'resume']);
});
