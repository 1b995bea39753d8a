import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, inject } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { createMemoryStore } from '../../src/tape/stores/memory-store.js';
import { createPgStore } from '../../src/tape/stores/postgres/pg-store.js';
import { storeContract } from './store-contract.js';

const folders: string[] = [];
afterAll(() => {
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

storeContract('folder of JSONL files', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-contract-'));
  folders.push(dir);
  return createDirStore(dir, { pollMs: 20 });
});

storeContract('memory', async () => createMemoryStore());

// PostgreSQL: one throwaway cluster per test run (test/global-setup.ts); each case gets a namespace of its own.
const pgUrl = inject('pgUrl');
if (pgUrl === null) console.warn(inject('pgNote'));
let pgCount = 0;
storeContract(
  'PostgreSQL',
  async () => createPgStore(pgUrl as string, { namespace: `contract-${process.pid}-${pgCount++}` }),
  pgUrl === null ? { skip: inject('pgNote') } : {},
);
