/** A Realtime agent on a plain `ws` client, for tests that need a real session on a tape. */
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';

type Json = Record<string, unknown>;

/** An agent on the Realtime API with a plain `ws` client: asks about the weather, runs the tool, sends the output back. */
export async function weatherAgent(url: string): Promise<{ events: Json[]; close: { code: number; reason: string } }> {
  const ws = new WebSocket(url, 'realtime', { headers: { authorization: 'Bearer sk-test-SECRET-KEY' } });
  const events: Json[] = [];
  // Ids the client makes up differ every run, as they would.
  const userItem = `item_${randomUUID()}`;
  const send = (ev: Json): void => ws.send(JSON.stringify({ event_id: `event_${randomUUID()}`, ...ev }));
  const close = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  let done = 0;
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (data) => {
      const ev = JSON.parse(data.toString()) as Json;
      events.push(ev);
      if (ev.type === 'session.created') {
        send({ type: 'session.update', session: { instructions: 'Be brief.', tools: [{ type: 'function', name: 'get_weather' }] } });
        send({
          type: 'conversation.item.create',
          item: { id: userItem, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is the weather?' }] },
        });
        send({ type: 'response.create' });
      }
      if (ev.type === 'conversation.item.created' && (ev.item as Json).role === 'user' && (ev.item as Json).id !== userItem)
        reject(new Error(`the user item came back as ${String((ev.item as Json).id)}, sent as ${userItem}`));
      if (ev.type === 'response.done') {
        const call = ((ev.response as Json).output as Json[]).find((o) => o.type === 'function_call');
        if (call !== undefined) {
          send({
            type: 'conversation.item.create',
            previous_item_id: userItem,
            item: { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"sunny"}' },
          });
          send({ type: 'response.create' });
        } else if (++done === 1) {
          ws.close(1000, 'bye');
          resolve();
        }
      }
    });
  });
  return { events, close: await close };
}
