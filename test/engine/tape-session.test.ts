import { describe, expect, it } from 'vitest';
import { openTapeSession } from '../../src/engine/tape-session.js';
import { createMemoryStore } from '../../src/tape/stores/memory-store.js';

describe('openTapeSession', () => {
  it('refuses to replay a tape while a writer holds it (it is being recorded), and replays it once closed', async () => {
    const store = createMemoryStore();
    const writer = await store.openWriter({ name: 'busy', header: { mode: 'record', routes: [] } });
    const replay = { mode: 'replay' as const, store, tape: 'busy', routes: [], replayOf: { onMiss: 'strict' } };
    await expect(openTapeSession(replay)).rejects.toMatchObject({
      code: 'TAPE_LOCKED',
      status: 409,
      message: expect.stringContaining('cannot replay tape "busy": it is being recorded by this process') as unknown,
    });
    await writer.close();
    const session = await openTapeSession(replay);
    expect(session.source?.name).toBe('busy');
    await session.writer.close();
  });
});
