/**
 * The promises every tape store keeps (`src/tape/store.ts`), as one suite run against each store: the folder of
 * JSONL files, memory, and PostgreSQL. A store passes when it behaves like the others in every case here.
 */
import { describe, expect, it } from 'vitest';
import type { NewExchange, TapeStore } from '../../src/tape/store.js';

/** Makes a fresh, empty store for one test (its own folder, its own namespace). */
export type StoreFactory = () => Promise<TapeStore>;

let n = 0;
export function newExchange(
  opts: { model?: string; tool?: string; mcpTool?: string; body?: unknown; answer?: unknown; secret?: string } = {},
): NewExchange {
  n++;
  return {
    startedAt: new Date(1_700_000_000_000 + n).toISOString(),
    offsetMs: n,
    transport: 'http',
    route: opts.mcpTool !== undefined ? '/everything/mcp' : '/openai',
    upstream: 'https://api.openai.com',
    request: {
      method: 'POST',
      path: '/v1/chat/completions',
      query: [],
      headers: { 'content-type': 'application/json', ...(opts.secret !== undefined ? { authorization: `Bearer ${opts.secret}` } : {}) },
      body: {
        kind: 'json',
        json: opts.body ?? { model: opts.model ?? 'gpt-4.1-mini', messages: [{ role: 'user', content: `question ${n}` }] },
      },
    },
    response: {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { kind: 'json', json: opts.answer ?? { id: `answer-${n}`, b: 1, a: 2 } },
    },
    timing: { ttfbMs: 1, durationMs: 5 },
    ...(opts.model !== undefined
      ? {
          llm: {
            provider: 'openai',
            api: 'chat.completions',
            model: opts.model,
            params: {},
            streamed: false,
            usage: { inputTokens: 10, outputTokens: 5 },
            toolCalls: opts.tool !== undefined ? [{ id: 'call_1', name: opts.tool, arguments: {} }] : [],
          },
        }
      : {}),
    ...(opts.mcpTool !== undefined
      ? {
          mcp: {
            direction: 'client-to-server' as const,
            method: 'tools/call',
            toolName: opts.mcpTool,
            notifications: [],
            transport: 'streamable-http' as const,
          },
        }
      : {}),
  };
}

const header = { mode: 'record' as const, routes: [{ prefix: '/openai', upstream: 'https://user:pw@api.openai.com' }] };

async function record(
  store: TapeStore,
  name: string,
  exchanges: NewExchange[],
  extra: Partial<Parameters<TapeStore['openWriter']>[0]> = {},
) {
  const w = await store.openWriter({ name, header, ...extra });
  for (const ex of exchanges) await w.append(ex);
  await w.close();
  return w;
}

export function storeContract(label: string, make: StoreFactory, opts: { skip?: string } = {}): void {
  const d = opts.skip !== undefined ? describe.skip : describe;
  d(`TapeStore contract: ${label}`, () => {
    it('reads a tape back as written: header, exchanges in order with ids and seq, credentials redacted', async () => {
      const store = await make();
      try {
        const w = await store.openWriter({ name: 'team/run-1', header });
        // Appended in one turn: one group commit; every append resolves once durable.
        const written = await Promise.all(
          [
            newExchange({ model: 'gpt-4.1-mini' }),
            newExchange({ secret: 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789' }),
            newExchange(),
          ].map((ex) => w.append(ex)),
        );
        expect(written.map((e) => e.id)).toEqual(['000000', '000001', '000002']);
        expect(w.count).toBe(3);
        expect(w.path).toContain('run-1');
        await w.close();
        const tape = await store.load('team/run-1');
        expect(tape.name).toBe('team/run-1');
        expect(tape.header).toMatchObject({ type: 'header', name: 'team/run-1', mode: 'record' });
        expect(tape.header.routes[0]?.upstream).not.toContain('pw');
        expect(tape.exchanges.map((e) => e.seq)).toEqual([0, 1, 2]);
        expect(tape.exchanges[0]?.llm?.model).toBe('gpt-4.1-mini');
        // Body key order survives the store (replay serves these bytes).
        expect(JSON.stringify(tape.exchanges[0]?.response?.body)).toMatch(/"id":"answer-\d+","b":1,"a":2/);
        expect(tape.problems).toEqual([]);
        const lines = [];
        for await (const l of store.lines('team/run-1')) lines.push(l);
        expect(lines).toHaveLength(4);
        expect(JSON.parse(lines[0]!.text)).toMatchObject({ type: 'header' });
        expect(lines.map((l) => l.text).join('\n')).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz0123456789');
        expect(await store.has('team/run-1')).toBe(true);
        expect(await store.has('team/run-2')).toBe(false);
        expect((await store.header('team/run-1')).name).toBe('team/run-1');
      } finally {
        await store.close();
      }
    });

    it('one writer per tape; fail, overwrite and append when it exists', async () => {
      const store = await make();
      try {
        const w = await store.openWriter({ name: 'busy', header });
        await w.append(newExchange());
        await expect(store.openWriter({ name: 'busy', header, ifExists: 'append' })).rejects.toMatchObject({ code: 'TAPE_LOCKED' });
        await expect(store.openWriter({ name: 'busy', header, ifExists: 'overwrite' })).rejects.toMatchObject({ code: 'TAPE_LOCKED' });
        await w.close();
        await expect(store.openWriter({ name: 'busy', header })).rejects.toMatchObject({ code: 'TAPE_EXISTS' });
        const more = await store.openWriter({ name: 'busy', header, ifExists: 'append' });
        expect(more.count).toBe(1);
        expect((await more.append(newExchange())).seq).toBe(1);
        await more.close();
        expect((await store.load('busy')).exchanges.map((e) => e.seq)).toEqual([0, 1]);
        await record(store, 'busy', [newExchange()], { ifExists: 'overwrite' });
        expect((await store.load('busy')).exchanges).toHaveLength(1);
      } finally {
        await store.close();
      }
    });

    it('says who is writing a tape while a writer holds it, and nobody once it is closed', async () => {
      const store = await make();
      try {
        expect(await store.writing('recording')).toBeUndefined();
        const w = await store.openWriter({ name: 'recording', header });
        await w.append(newExchange());
        expect(await store.writing('recording')).toMatch(new RegExp(`pid ${process.pid}|this process`));
        await w.close();
        expect(await store.writing('recording')).toBeUndefined();
        await expect(store.writing('../out')).rejects.toMatchObject({ code: 'BAD_ARGS' });
      } finally {
        await store.close();
      }
    });

    it('never removes a tape being written; removes it (and says so) once closed', async () => {
      const store = await make();
      try {
        const w = await store.openWriter({ name: 'live', header });
        await w.append(newExchange());
        await expect(store.remove('live')).rejects.toMatchObject({ code: 'TAPE_LOCKED' });
        expect((await store.load('live')).exchanges).toHaveLength(1);
        await w.append(newExchange());
        await w.close();
        expect((await store.load('live')).exchanges).toHaveLength(2);
        const removed = await store.remove('live');
        expect(removed.name).toBe('live');
        expect(await store.has('live')).toBe(false);
        await expect(store.remove('live')).rejects.toMatchObject({ code: 'TAPE_NOT_FOUND' });
        await expect(store.load('live')).rejects.toMatchObject({ code: 'TAPE_NOT_FOUND' });
      } finally {
        await store.close();
      }
    });

    it('stores large bodies apart, content-addressed, and brings them back whole', async () => {
      const store = await make();
      try {
        const big = 'x'.repeat(3000);
        await record(
          store,
          'big',
          [newExchange({ body: { model: 'm', prompt: big } }), newExchange({ body: { model: 'm', prompt: big } })],
          {
            largeBodyBytes: 1000,
          },
        );
        const raw = [];
        for await (const l of store.lines('big')) raw.push(l.text);
        expect(raw[1]).toContain('"kind":"file"');
        expect(raw[1]).not.toContain(big);
        const tape = await store.load('big');
        expect(tape.exchanges[0]?.request.body).toEqual({ kind: 'json', json: { model: 'm', prompt: big } });
        // Bodies larger than `inlineUpTo` stay references (checked as they are read), for replay to stream them.
        const kept = await store.load('big', { inlineUpTo: 2000 });
        expect(kept.exchanges[0]?.request.body).toMatchObject({ kind: 'file', encoding: 'json' });
        expect(kept.problems).toEqual([]);
        expect((await store.load('big', { inlineUpTo: 10_000 })).exchanges[0]?.request.body.kind).toBe('json');
        const shallow = await store.load('big', { resolveFiles: false });
        const stored = shallow.exchanges[1]?.request.body;
        expect(stored?.kind).toBe('file');
        if (stored?.kind !== 'file') throw new Error('not stored apart');
        expect((await store.readBlob('big', stored)).toString()).toBe(JSON.stringify({ model: 'm', prompt: big }));
        await expect(store.readBlob('big', { ...stored, sha256: '0'.repeat(64) })).rejects.toMatchObject({ code: 'TAPE_CORRUPT' });
        // Fed as it streams: bounded memory whatever the size.
        const sink = store.blobSink('big');
        sink.write(Buffer.from('hello '));
        sink.write(Buffer.from('world'));
        const body = await sink.end('text');
        expect(body).toMatchObject({ kind: 'file', encoding: 'text', bytes: 11 });
        expect((await store.readBlob('big', body)).toString()).toBe('hello world');
        // Read as it streams too, checked on the way.
        const streamed: Buffer[] = [];
        for await (const chunk of store.openBlob('big', body)) streamed.push(chunk as Buffer);
        expect(Buffer.concat(streamed).toString()).toBe('hello world');
        const tampered = async (): Promise<void> => {
          for await (const chunk of store.openBlob('big', { ...body, bytes: 12 })) void chunk;
        };
        await expect(tampered()).rejects.toMatchObject({ code: 'TAPE_CORRUPT' });
        // Bytes that are not the recorded ones (the same size) never deliver their end: whoever serves them as they
        // come (a replay reads answers when it serves them) cuts the answer short rather than end it as whole.
        let got = 0;
        const wrong = async (): Promise<void> => {
          for await (const chunk of store.openBlob('big', { ...body, sha256: '0'.repeat(64) })) got += (chunk as Buffer).byteLength;
        };
        await expect(wrong()).rejects.toMatchObject({ code: 'TAPE_CORRUPT' });
        expect(got).toBeLessThan(body.bytes);
        // A large body streams in and out in bounded pieces, byte for byte.
        const many = store.blobSink('big');
        const piece = Buffer.alloc(300 * 1024, 7);
        for (let i = 0; i < 10; i++) many.write(piece);
        const manyBody = await many.end('base64');
        let total = 0;
        let largest = 0;
        for await (const chunk of store.openBlob('big', manyBody)) {
          total += (chunk as Buffer).byteLength;
          largest = Math.max(largest, (chunk as Buffer).byteLength);
        }
        expect(total).toBe(10 * piece.byteLength);
        expect(largest).toBeLessThanOrEqual(2 * 1024 * 1024);
      } finally {
        await store.close();
      }
    });

    it('lists tapes by name with their totals, filtered and paged', async () => {
      const store = await make();
      try {
        await record(store, 'a-run', [newExchange({ model: 'gpt-4.1-mini', tool: 'send_email' }), newExchange({ mcpTool: 'search' })]);
        await record(store, 'b-run', [newExchange({ model: 'claude-haiku-4-5' })]);
        await record(store, 'c-run', []);
        await store
          .openWriter({ name: 'a-run.replay-1', header: { mode: 'replay', routes: [], replayOf: { tape: 'a-run', onMiss: 'strict' } } })
          .then(async (w) => {
            await w.append(newExchange({ model: 'gpt-4.1-mini' }));
            await w.close();
          });
        const all = await store.list();
        expect(all.tapes.map((t) => t.name)).toEqual(['a-run', 'a-run.replay-1', 'b-run', 'c-run']);
        const a = all.tapes[0];
        if (a?.ok !== true) throw new Error('a-run unreadable');
        expect(a.stats).toMatchObject({
          exchanges: 2,
          llmCalls: 1,
          mcpToolCalls: 1,
          modelToolCalls: 1,
          tools: ['search', 'send_email'],
          models: ['gpt-4.1-mini'],
        });
        expect(a.stats.usage['gpt-4.1-mini']).toEqual({ calls: 1, inputTokens: 10, outputTokens: 5, cachedInputTokens: 0 });
        const names = async (q: Parameters<TapeStore['list']>[0]) => (await store.list(q)).tapes.map((t) => t.name);
        expect(await names({ model: 'gpt-4.1-mini' })).toEqual(['a-run', 'a-run.replay-1']);
        expect(await names({ tool: 'send_email' })).toEqual(['a-run']);
        expect(await names({ tool: 'search' })).toEqual(['a-run']);
        expect(await names({ mode: 'replay' })).toEqual(['a-run.replay-1']);
        expect(await names({ prefix: 'b' })).toEqual(['b-run']);
        expect(await names({ since: new Date(Date.now() + 60_000) })).toEqual([]);
        expect(await names({ since: new Date(Date.now() - 60_000), mode: 'record' })).toEqual(['a-run', 'b-run', 'c-run']);
        const first = await store.list({ limit: 3 });
        expect(first.tapes.map((t) => t.name)).toEqual(['a-run', 'a-run.replay-1', 'b-run']);
        expect(first.next).toBe('b-run');
        const second = await store.list({ limit: 3, after: first.next! });
        expect(second.tapes.map((t) => t.name)).toEqual(['c-run']);
        expect(second.next).toBeUndefined();
        expect(await store.names()).toEqual(['a-run', 'a-run.replay-1', 'b-run', 'c-run']);
        expect(await store.replaysOf('a-run')).toEqual(['a-run.replay-1']);
      } finally {
        await store.close();
      }
    });

    it('resolves names, latest, latest-replay and prefixes, and names the closest tapes when one is missing', async () => {
      const store = await make();
      try {
        await record(store, 'checkout-bug', [newExchange()]);
        await new Promise((r) => setTimeout(r, 5));
        await record(store, 'search', [newExchange()]);
        await new Promise((r) => setTimeout(r, 5));
        await store
          .openWriter({ name: 'search.replay-1', header: { mode: 'replay', routes: [], replayOf: { tape: 'search', onMiss: 'strict' } } })
          .then((w) => w.close());
        expect(await store.resolve('checkout-bug')).toMatchObject({ name: 'checkout-bug', by: 'name' });
        expect(await store.resolve('latest')).toMatchObject({ name: 'search', by: 'latest' });
        expect(await store.resolve('latest', { includeReplays: true })).toMatchObject({ name: 'search.replay-1' });
        expect(await store.resolve('latest-replay')).toMatchObject({ name: 'search.replay-1', by: 'latest' });
        expect(await store.resolve('check')).toMatchObject({ name: 'checkout-bug', by: 'prefix' });
        // A prefix of a recording and its replays means the recording.
        expect(await store.resolve('sea')).toMatchObject({ name: 'search', by: 'prefix' });
        const found = await store.resolve('search');
        expect(found.store).toBe(store);
        await expect(store.resolve('serch')).rejects.toMatchObject({
          code: 'TAPE_NOT_FOUND',
          message: expect.stringContaining('did you mean "search"') as unknown,
        });
        await expect(store.resolve('../x')).rejects.toMatchObject({ code: 'BAD_ARGS' });
      } finally {
        await store.close();
      }
    });

    it('follows a tape being written: watch fires after a commit and the version changes', async () => {
      const store = await make();
      try {
        const w = await store.openWriter({ name: 'watched', header });
        const v0 = await store.version('watched');
        let calls = 0;
        let subscribed!: () => void;
        const following = new Promise<void>((resolve) => (subscribed = resolve));
        const changed = new Promise<void>((resolve) => {
          const stop = store.watch('watched', () => {
            calls++;
            // The first call is the state at subscription (once the store follows the tape); the next, the append below.
            if (calls === 1) subscribed();
            if (calls === 2) {
              stop();
              resolve();
            }
          });
        });
        await following;
        await w.append(newExchange());
        await changed;
        expect(await store.version('watched')).not.toBe(v0);
        await w.close();
        expect(await store.version('nope')).toBeUndefined();
      } finally {
        await store.close();
      }
    });

    it('leaves no tape behind when asked to discard an empty one', async () => {
      const store = await make();
      try {
        const empty = await store.openWriter({ name: 'nothing', header, discardIfEmpty: true });
        await empty.close();
        expect(await store.has('nothing')).toBe(false);
        const used = await store.openWriter({ name: 'something', header, discardIfEmpty: true });
        await used.append(newExchange());
        await used.close();
        expect(await store.has('something')).toBe(true);
      } finally {
        await store.close();
      }
    });

    it('WebSocket sessions: records that grow as messages come, merged on read, kept in order and copied exactly', async () => {
      const store = await make();
      const other = await make();
      try {
        const w = await store.openWriter({ name: 'realtime', header });
        await w.append(newExchange({ model: 'gpt-4.1-mini' }));
        if (w.begin === undefined) throw new Error('this store cannot record sessions');
        const audio = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
        const open = await w.begin({
          startedAt: new Date().toISOString(),
          offsetMs: 10,
          transport: 'websocket',
          route: '/openai',
          request: {
            method: 'GET',
            path: '/v1/realtime',
            query: [['model', 'gpt-realtime']],
            headers: { authorization: 'Bearer sk-live-0123456789abcdef0123' },
            body: { kind: 'empty' },
          },
          response: { status: 101, headers: {} },
          timing: { durationMs: 0 },
        });
        await open.addFrames([
          { from: 'server', offsetMs: 1, kind: 'text', data: { kind: 'json', json: { type: 'session.created', z: 1, a: 2 } } },
        ]);
        await w.append(newExchange()); // another exchange completes while the session is open
        await open.addFrames([
          { from: 'client', offsetMs: 2, kind: 'binary', data: { kind: 'base64', base64: audio.toString('base64') } },
          { from: 'client', offsetMs: 3, kind: 'close', code: 1000, reason: 'bye' },
        ]);
        await open.end({ durationMs: 4 });
        await w.close();
        expect(w.count).toBe(3);
        const tape = await store.load('realtime');
        expect(tape.header.format).toBe(2);
        expect(tape.problems).toEqual([]);
        expect(tape.exchanges.map((e) => e.transport)).toEqual(['http', 'websocket', 'http']);
        const ws = tape.exchanges[1]!;
        expect(ws.timing.durationMs).toBe(4);
        expect(ws.request.headers.authorization).not.toContain('sk-live');
        expect(ws.websocket?.frames.map((f) => f.kind)).toEqual(['text', 'binary', 'close']);
        expect(JSON.stringify(ws.websocket?.frames[0]?.data)).toBe('{"kind":"json","json":{"type":"session.created","z":1,"a":2}}');
        expect(ws.websocket?.frames[1]?.data).toEqual({ kind: 'base64', base64: audio.toString('base64') });
        const listed = (await store.list()).tapes[0];
        expect(listed?.ok === true && listed.stats.exchanges).toBe(3);
        // Copied to another store record for record (the session's messages included), and back.
        const { copyTape } = await import('../../src/tape/stores/copy-tape.js');
        expect((await copyTape(store, 'realtime', other)).exchanges).toBe(3);
        const a = [];
        for await (const l of store.lines('realtime')) a.push(l.text);
        const b = [];
        for await (const l of other.lines('realtime')) b.push(l.text);
        expect(b).toEqual(a);
        expect((await other.load('realtime')).exchanges).toEqual(tape.exchanges);
      } finally {
        await store.close();
        await other.close();
      }
    });

    it('keeps U+0000 wherever a record holds it (prompt, answer, model, tool, session message), and copies it exactly', async () => {
      const store = await make();
      const other = await make();
      try {
        const w = await store.openWriter({ name: 'nul', header });
        const prompt = { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'before\u0000after \\u0000 literal' }] };
        await w.append(newExchange({ model: 'gpt-\u0000mini', tool: 'send\u0000mail', body: prompt, answer: { out: '\u0000' } }));
        const open = await w.begin!({
          startedAt: new Date().toISOString(),
          offsetMs: 10,
          transport: 'websocket',
          route: '/openai',
          request: { method: 'GET', path: '/v1/realtime', query: [], headers: {}, body: { kind: 'empty' } },
          response: { status: 101, headers: {} },
          timing: { durationMs: 0 },
        });
        await open.addFrames([{ from: 'server', offsetMs: 1, kind: 'text', data: { kind: 'text', text: 'nul:\u0000' } }]);
        await open.end({ durationMs: 2 });
        await w.append(newExchange()); // the tape still takes exchanges after them
        await w.close();
        expect(w.failure).toBeUndefined();
        expect(w.count).toBe(3);
        const tape = await store.load('nul');
        expect(tape.problems).toEqual([]);
        expect(tape.exchanges[0]?.request.body).toEqual({ kind: 'json', json: prompt });
        expect(tape.exchanges[0]?.response?.body).toEqual({ kind: 'json', json: { out: '\u0000' } });
        expect(tape.exchanges[0]?.llm?.model).toBe('gpt-\u0000mini');
        expect(tape.exchanges[1]?.websocket?.frames[0]?.data).toEqual({ kind: 'text', text: 'nul:\u0000' });
        const listed = (await store.list()).tapes[0];
        expect(listed?.ok === true && listed.stats.exchanges).toBe(3);
        const { copyTape } = await import('../../src/tape/stores/copy-tape.js');
        expect((await copyTape(store, 'nul', other)).exchanges).toBe(3);
        const a = [];
        for await (const l of store.lines('nul')) a.push(l.text);
        const b = [];
        for await (const l of other.lines('nul')) b.push(l.text);
        expect(b).toEqual(a);
      } finally {
        await store.close();
        await other.close();
      }
    });

    it('for a replay, answers stored apart stay in the store whatever their size, checked only to be there at their size', async () => {
      const store = await make();
      try {
        const big = 'x'.repeat(3000);
        await record(store, 'apart', [newExchange({ body: { model: 'm', prompt: big }, answer: { text: big } })], { largeBodyBytes: 1000 });
        const replay = { inlineUpTo: 10_000, answersApart: true };
        const tape = await store.load('apart', replay);
        expect(tape.problems).toEqual([]);
        // The request is read in (the matcher reads it); the answer is left for the replay to stream when it serves it.
        expect(tape.exchanges[0]?.request.body).toEqual({ kind: 'json', json: { model: 'm', prompt: big } });
        const answer = tape.exchanges[0]?.response?.body;
        expect(answer).toMatchObject({ kind: 'file', encoding: 'json' });
        if (answer?.kind !== 'file') throw new Error('not stored apart');
        expect((await store.readBlob('apart', answer)).toString()).toBe(JSON.stringify({ text: big }));
        // Every other reader reads it in, as before.
        expect((await store.load('apart', { inlineUpTo: 10_000 })).exchanges[0]?.response?.body).toEqual({
          kind: 'json',
          json: { text: big },
        });
        // One that is not there, or not at its size, is named when the tape opens, and its exchange left out.
        const w = await store.openWriter({ name: 'apart', header, ifExists: 'append' });
        await w.append({
          ...newExchange(),
          response: {
            status: 200,
            headers: {},
            body: { ...answer, sha256: 'f'.repeat(64), file: answer.file.replace(answer.sha256, 'f'.repeat(64)) },
          },
        });
        await w.append({ ...newExchange(), response: { status: 200, headers: {}, body: { ...answer, bytes: answer.bytes + 1 } } });
        await w.close();
        const damaged = await store.load('apart', replay);
        expect(damaged.exchanges.map((e) => e.id)).toEqual(['000000']);
        expect(damaged.problems.map((p) => p.message)).toEqual([
          expect.stringMatching(/^exchange 000001: side file .* is corrupt or unreadable \((no stored body|.*ENOENT)/),
          expect.stringMatching(/^exchange 000002: side file .* is corrupt or unreadable \(.*, recorded \d+( bytes)?\); exchange skipped$/),
        ]);
      } finally {
        await store.close();
      }
    });

    it('a stream stored apart: its events in a side file redacted like the line, format 3, inlined on read, copied with the tape', async () => {
      const store = await make();
      const other = await make();
      try {
        const w = await store.openWriter({ name: 'stream', header });
        await w.append(newExchange());
        expect(w.header.format).toBe(1);
        if (w.eventLines === undefined) throw new Error('this store cannot store streams apart');
        const secret = `sk-proj-${'a1'.repeat(16)}`;
        const events = [
          { offsetMs: 1.5, data: '{"n":1}' },
          { offsetMs: 2, event: 'delta', data: `{"text":"the key is ${secret}"}`, id: '2' },
          { offsetMs: 3, data: 'x', raw: 'data:x\r\n\r\n' },
        ];
        const sink = store.blobSink('stream');
        sink.write(Buffer.from(w.eventLines(events.slice(0, 2))));
        sink.write(Buffer.from(w.eventLines(events.slice(2))));
        const stored = { ...(await sink.end('text')), encoding: 'text' as const, events: 3 };
        const ex = newExchange({ body: { model: 'm', note: secret } });
        ex.response = { status: 200, headers: { 'content-type': 'text/event-stream' }, eventsFile: stored, tail: 'data: cu' };
        await w.append(ex);
        await w.close();
        expect(w.header.format).toBe(3);
        const raw = [];
        for await (const l of store.lines('stream')) raw.push(l.text);
        expect(raw[0]).toContain('"format":3,');
        expect(raw[2]).toContain('"eventsFile":{"kind":"file"');
        expect(raw.join('\n')).not.toContain(secret);
        expect((await store.readBlob('stream', stored)).toString()).not.toContain(secret);

        // Read back: the events in the exchange, the secret under the line's marker for it.
        const tape = await store.load('stream');
        expect(tape.header.format).toBe(3);
        expect(tape.problems).toEqual([]);
        const back = tape.exchanges[1]!.response!;
        expect(back.eventsFile).toBeUndefined();
        expect(back.events).toEqual([events[0], { ...events[1], data: '{"text":"the key is [REDACTED:1]"}' }, events[2]]);
        expect(back.tail).toBe('data: cu');
        expect(tape.exchanges[1]!.request.body).toEqual({ kind: 'json', json: { model: 'm', note: '[REDACTED:1]' } });
        // Left in the store above `inlineUpTo`, every line checked.
        const kept = await store.load('stream', { inlineUpTo: 10 });
        expect(kept.problems).toEqual([]);
        expect(kept.exchanges[1]!.response).toMatchObject({ eventsFile: { kind: 'file', events: 3 } });
        expect(kept.exchanges[1]!.response?.events).toBeUndefined();

        // Copied to another store with its side file, record for record.
        const { copyTape } = await import('../../src/tape/stores/copy-tape.js');
        expect((await copyTape(store, 'stream', other)).exchanges).toBe(2);
        const copied = [];
        for await (const l of other.lines('stream')) copied.push(l.text);
        expect(copied).toEqual(raw);
        expect((await other.load('stream')).exchanges).toEqual(tape.exchanges);
        // An older reader's record of it: a count that does not match is a problem, never a stream served short.
        const w2 = await store.openWriter({ name: 'short', header });
        const again = store.blobSink('short');
        again.write(await store.readBlob('stream', stored));
        const four = { ...(await again.end('text')), encoding: 'text' as const, events: 4 };
        await w2.append({ ...ex, response: { ...ex.response, eventsFile: four } });
        await w2.close();
        const short = await store.load('short');
        expect(short.exchanges).toEqual([]);
        expect(short.problems[0]?.message).toMatch(/is corrupt or unreadable \(it holds 3 event\(s\), recorded 4\); exchange skipped$/);
      } finally {
        await store.close();
        await other.close();
      }
    });

    it('a closed writer refuses appends; a tape written concurrently by many clients keeps every exchange', async () => {
      const store = await make();
      try {
        const w = await store.openWriter({ name: 'many', header });
        const rounds = await Promise.all(
          Array.from({ length: 5 }, async () => {
            const ids = [];
            for (let i = 0; i < 40; i++) ids.push((await w.append(newExchange())).seq);
            return ids;
          }),
        );
        await w.close();
        await expect(w.append(newExchange())).rejects.toMatchObject({ code: 'TAPE_CLOSED' });
        const tape = await store.load('many');
        expect(tape.exchanges.map((e) => e.seq).sort((x, y) => x - y)).toEqual(rounds.flat().sort((x, y) => x - y));
        expect(new Set(tape.exchanges.map((e) => e.id)).size).toBe(200);
      } finally {
        await store.close();
      }
    });
  });
}
