import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { createDirStore } from '../../src/tape/dir-store.js';
import { createMemoryStore } from '../../src/tape/memory-store.js';
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
