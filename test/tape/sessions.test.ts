import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { createTapeWriter, type NewExchange } from '../../src/tape/stores/tape-writer.js';
import type { WsFrame } from '../../src/tape/schema.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-sessions-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const session = (): NewExchange => ({
  startedAt: new Date().toISOString(),
  offsetMs: 0,
  transport: 'websocket',
  route: '/openai',
  upstream: 'https://api.openai.com',
  request: {
    method: 'GET',
    path: '/v1/realtime',
    query: [['model', 'gpt-realtime']],
    headers: { authorization: 'Bearer sk-live-SECRET', 'sec-websocket-protocol': 'realtime' },
    body: { kind: 'empty' },
  },
  response: { status: 101, headers: { 'sec-websocket-protocol': 'realtime' } },
  timing: { ttfbMs: 3, durationMs: 0 },
});

const text = (from: 'client' | 'server', offsetMs: number, json: unknown): WsFrame => ({
  from,
  offsetMs,
  kind: 'text',
  data: { kind: 'json', json },
});

const lines = (name: string): Record<string, unknown>[] =>
  readFileSync(path.join(dir, `${name}.jsonl`), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('sessions on the tape (exchanges that grow)', () => {
  it('writes the exchange line, frames lines as messages come and an end line; the reader merges them into one exchange', async () => {
    const w = await createTapeWriter({ dir, name: 's', header: { mode: 'record', routes: [] } });
    expect(w.header.format).toBe(1);
    await w.append({ ...session(), transport: 'http', response: { status: 200, headers: {} } });
    const open = await w.begin!(session());
    expect(open.exchange.id).toBe('000001');
    expect(w.header.format).toBe(2);
    // Two messages in one turn: one line.
    const a = open.addFrames([text('server', 1, { type: 'session.created' })]);
    const b = open.addFrames([
      text('client', 2, { type: 'session.update', session: { api_key: 'sk-proj-abcdefghijklmnopqrstuvwxyz012345' } }),
    ]);
    await Promise.all([a, b]);
    await open.addFrames([{ from: 'client', offsetMs: 9, kind: 'close', code: 1000, reason: 'bye' }]);
    await open.end({ durationMs: 10 });
    // A session that never ends (the recorder is killed, say).
    const after = await w.begin!(session());
    expect(after.exchange.id).toBe('000002');
    await after.addFrames([text('server', 1, { type: 'session.created' })]);
    expect(w.count).toBe(3);
    await w.close();

    const raw = lines('s');
    expect(raw.map((l) => l.type)).toEqual(['header', 'exchange', 'exchange', 'frames', 'frames', 'end', 'exchange', 'frames']);
    expect(raw[0]!.format).toBe(2);
    expect((raw[3]!.frames as unknown[]).length).toBe(2);
    const file = readFileSync(path.join(dir, 's.jsonl'), 'utf8');
    expect(file).not.toContain('SECRET');
    expect(file).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz012345');

    const tape = await readTape(path.join(dir, 's.jsonl'));
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges.map((e) => e.id)).toEqual(['000000', '000001', '000002']);
    const s = tape.exchanges[1]!;
    expect(s.transport).toBe('websocket');
    expect(s.error).toBeUndefined();
    expect(s.timing.durationMs).toBe(10);
    expect(s.websocket?.frames.map((f) => [f.from, f.kind])).toEqual([
      ['server', 'text'],
      ['client', 'text'],
      ['client', 'close'],
    ]);
    expect(s.websocket?.frames[1]?.data).toEqual({ kind: 'json', json: { type: 'session.update', session: { api_key: '[REDACTED:1]' } } });
    expect(s.websocket?.frames[2]).toMatchObject({ code: 1000, reason: 'bye' });
    // A session still open when read (or cut by a crash) reads as cut, with what it had.
    expect(tape.exchanges[2]?.error?.code).toBe('SESSION_CUT');
    expect(tape.exchanges[2]?.websocket?.frames).toHaveLength(1);
  });

  it('stores a large binary message byte-exact in a side file, verified when read', async () => {
    const w = await createTapeWriter({ dir, name: 'big', header: { mode: 'record', routes: [] } });
    const audio = randomBytes(1_000_000);
    const open = await w.begin!(session());
    await open.addFrames([{ from: 'client', offsetMs: 1, kind: 'binary', data: { kind: 'base64', base64: audio.toString('base64') } }]);
    await open.end({ durationMs: 2 });
    await w.close();
    expect(readFileSync(path.join(dir, 'big.jsonl'), 'utf8').length).toBeLessThan(10_000);
    const files = readdirSync(path.join(dir, 'big.files'));
    expect(files).toHaveLength(1);
    const tape = await readTape(path.join(dir, 'big.jsonl'));
    const data = tape.exchanges[0]?.websocket?.frames[0]?.data;
    expect(data?.kind).toBe('base64');
    expect(Buffer.from((data as { base64: string }).base64, 'base64').equals(audio)).toBe(true);
    // Tampered: the session is left out and said so, never served.
    writeFileSync(path.join(dir, 'big.files', files[0]!), Buffer.alloc(1_000_000));
    const bad = await readTape(path.join(dir, 'big.jsonl'));
    expect(bad.exchanges).toEqual([]);
    expect(bad.problems[0]?.message).toMatch(/exchange 000000: side file big\.files\/\w+\.bin is corrupt/);
  });

  it('reports continuation lines it cannot place, and an older reader refuses a format 2 tape clearly', async () => {
    const w = await createTapeWriter({ dir, name: 'odd', header: { mode: 'record', routes: [] } });
    const open = await w.begin!(session());
    await open.end({ durationMs: 1 });
    await w.close();
    const file = path.join(dir, 'odd.jsonl');
    writeFileSync(
      file,
      readFileSync(file, 'utf8') +
        JSON.stringify({ type: 'frames', exchange: '000000', frames: [] }) +
        '\n' +
        JSON.stringify({ type: 'frames', exchange: '000042', frames: [] }) +
        '\n' +
        JSON.stringify({ type: 'end', exchange: '000000' }) +
        '\n',
    );
    const tape = await readTape(file);
    expect(tape.exchanges).toHaveLength(1);
    expect(tape.problems.map((p) => p.message)).toEqual([
      'frames line for the ended session 000000; skipped',
      'frames line for no open session 000042; skipped',
      'not a valid end line (durationMs: Invalid input: expected number, received undefined); skipped',
    ]);
    writeFileSync(file, readFileSync(file, 'utf8').replace('"format":2', '"format":4'));
    await expect(readTape(file)).rejects.toThrow(/in format 4; this tapedeck \(.*\) reads format 1, 2 and 3: upgrade tapedeck/);
  });
});

describe('sessions in the in-memory store (the same records, through the same begin)', () => {
  it('stores the session as exchange, frames and end records and reads it back merged', async () => {
    const { createMemoryStore } = await import('../../src/tape/stores/memory-store.js');
    const store = createMemoryStore();
    const w = await store.openWriter({ name: 'm', header: { mode: 'record', routes: [] } });
    const open = await w.begin!(session());
    await open.addFrames([text('server', 1, { type: 'session.created' }), text('client', 2, { type: 'session.update' })]);
    await open.end({ durationMs: 3 });
    await w.close();
    expect(w.count).toBe(1);
    const tape = await store.load('m');
    expect(tape.header.format).toBe(2);
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges[0]?.websocket?.frames).toHaveLength(2);
    expect(tape.exchanges[0]?.timing.durationMs).toBe(3);
  });
});
