/**
 * A stored record taken apart into the call, answer, extras and meaning it was made of (`recordParts`) is made into
 * the same record again by the tee (`teeRecord`): what lets drift's refreshed tape go on through a tee and keep every
 * record it copies exactly as it was. Checked on every exchange of the compatibility tapes (LLM calls and streams, MCP
 * over every transport, a Realtime session, a wrapper run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordParts } from '../../src/engine/record.js';
import { teeRecord } from '../../src/engine/tee.js';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { COMPAT_TAPES, copyCompatTapes } from '../fixtures/compat/compat.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-record-parts-'));
  copyCompatTapes(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.each(COMPAT_TAPES)('every record of the %s tape is made again as it was', async (name) => {
  const tape = await createDirStore(dir).load(name);
  expect(tape.exchanges.length).toBeGreaterThan(0);
  for (const ex of tape.exchanges) {
    const { type: _t, id: _i, seq: _s, ...stored } = ex;
    const { call, answer, extras, meaning } = recordParts(ex);
    expect(JSON.parse(JSON.stringify(teeRecord(call, answer, { ...extras, meaningOf: meaning })))).toEqual(
      JSON.parse(JSON.stringify(stored)),
    );
  }
});
