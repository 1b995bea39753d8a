/**
 * A recorded stdio tape built in memory (the in-memory store, no server process): a notes server with a read-only
 * `read_note` (which reports progress) and a destructive `wipe_notes`, as `mcp-stdio --mode record` writes it.
 */
import { createLogger } from '../../../src/log.js';
import { createExchangeLog } from '../../../src/engine/exchange-log.js';
import { stdioEvent, stdioRequest } from '../../../src/transports/stdio/exchange.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import type { TapeStore } from '../../../src/tape/store.js';
import type { LoadedTape } from '../../../src/tape/tape-reader.js';
import type { NewExchange } from '../../../src/tape/stores/tape-writer.js';

export const ROUTE = 'stdio:notes';
export const log = createLogger('silent');

export const TOOLS = [
  { name: 'read_note', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'wipe_notes', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } },
];
export const NOTE = { content: [{ type: 'text', text: 'note a: buy milk' }] };

type Msg = Record<string, unknown>;

export async function recordedTape(): Promise<{ store: TapeStore; tape: LoadedTape }> {
  const store = createMemoryStore();
  const writer = await store.openWriter({ name: 'notes', header: { mode: 'record', routes: [] } });
  const out = createExchangeLog(writer, log);
  let at = 0;
  const put = (request: Msg, answer: Msg | undefined, events: Msg[] = []): void => {
    at += 10;
    const ex: NewExchange = {
      startedAt: new Date().toISOString(),
      offsetMs: at,
      transport: 'stdio',
      route: ROUTE,
      upstream: 'node notes.js',
      request: stdioRequest(request),
      response:
        answer === undefined
          ? { status: 202, headers: {} }
          : {
              status: 200,
              headers: {},
              body: { kind: 'json', json: answer },
              ...(events.length > 0 ? { events: events.map((e, i) => stdioEvent(e, i + 1)) } : {}),
            },
      timing: { durationMs: 5 },
    };
    out.write(ex);
  };
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'recorder', version: '1' } },
  };
  put(init, {
    jsonrpc: '2.0',
    id: 0,
    result: { protocolVersion: '2025-03-26', capabilities: { tools: {} }, serverInfo: { name: 'notes', version: '1' } },
  });
  put({ jsonrpc: '2.0', method: 'notifications/initialized' }, undefined);
  put({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 1, result: { tools: TOOLS } });
  put(
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_note', arguments: { id: 'a' }, _meta: { progressToken: 2 } } },
    { jsonrpc: '2.0', id: 2, result: NOTE },
    [{ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 2, progress: 1, total: 1 } }],
  );
  await out.drain();
  await writer.close();
  return { store, tape: await store.load('notes') };
}
