import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTapeWriter, type NewExchange } from '../../src/tape/stores/tape-writer.js';
import { readTape } from '../../src/tape/tape-reader.js';
import type { TapedeckError } from '../../src/errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-fail-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const exchange = (i: number): NewExchange => ({
  startedAt: new Date().toISOString(),
  offsetMs: i,
  transport: 'http',
  route: '/x',
  request: { method: 'POST', path: '/y', query: [], headers: {}, body: { kind: 'json', json: { i, pad: 'p'.repeat(100) } } },
  timing: { durationMs: 1 },
});

function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

describe('a tape that cannot be written', () => {
  it('fails loudly at the first failed write, counts only whole lines on disk, and cuts off the torn one', async () => {
    // The disk "fills" after 1,000 more bytes: the write that crosses it puts part of a line on disk, then ENOSPC.
    let budget = Infinity;
    const failures: TapedeckError[] = [];
    const w = await createTapeWriter({
      dir,
      name: 'full',
      header: { mode: 'record', routes: [] },
      onFailure: (err) => failures.push(err),
      fs: {
        writeSync: (fd, buf, off, len) => {
          if (budget <= 0) throw enospc();
          const n = Math.min(len, budget);
          budget -= n;
          return writeSync(fd, buf, off, n);
        },
      },
    });
    await w.append(exchange(0));
    await w.append(exchange(1));
    expect(w.count).toBe(2);
    budget = 1000;
    // One batch of five lines (one event-loop turn): three fit whole, the fourth is torn, the fifth never starts.
    const results = await Promise.allSettled([2, 3, 4, 5, 6].map((i) => w.append(exchange(i))));
    const lineBytes = Buffer.byteLength(readFileSync(path.join(dir, 'full.jsonl'), 'utf8').split('\n')[1]! + '\n');
    const whole = Math.floor(1000 / lineBytes);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(whole);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as TapedeckError);
    expect(rejected.length).toBe(5 - whole);
    expect(rejected[0]).toMatchObject({ code: 'TAPE_WRITE_FAILED', status: 503 });
    expect(rejected[0]!.message).toContain('ENOSPC: no space left on device');
    expect((rejected[0]!.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(failures).toHaveLength(1);
    expect(w.failure).toBe(failures[0]);
    expect(w.count).toBe(2 + whole);
    // From now on every append is refused at once, and the count stays what is on disk.
    budget = Infinity;
    await expect(w.append(exchange(9))).rejects.toMatchObject({ code: 'TAPE_WRITE_FAILED' });
    await w.close();
    const text = readFileSync(path.join(dir, 'full.jsonl'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const tape = await readTape(path.join(dir, 'full.jsonl'));
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges).toHaveLength(w.count);
  });

  it('refuses to start on a device that takes no bytes (/dev/full)', async () => {
    symlinkSync('/dev/full', path.join(dir, 'dev.jsonl'));
    await expect(
      createTapeWriter({ dir, name: 'dev', ifExists: 'overwrite', header: { mode: 'record', routes: [] } }),
    ).rejects.toMatchObject({
      code: 'TAPE_WRITE_FAILED',
      message: expect.stringContaining('ENOSPC') as unknown,
    });
    // The lock was released with the failed start: a later writer is not told the tape is locked.
    await expect(
      createTapeWriter({ dir, name: 'dev', ifExists: 'overwrite', header: { mode: 'record', routes: [] } }),
    ).rejects.toMatchObject({
      code: 'TAPE_WRITE_FAILED',
    });
  });

  it('stops at a real kernel limit (ulimit -f) mid-line, in another process, with every line on disk whole', async () => {
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const script = path.join(ROOT, 'test/tape/fixtures/fill-tape.ts');
      // SIGXFSZ ignored: the write past the limit fails with EFBIG instead of killing the process.
      const child = spawn('bash', ['-c', `trap '' XFSZ; ulimit -f 16; exec "${process.execPath}" --import tsx "${script}" "${dir}" lim`], {
        cwd: ROOT,
        stdio: 'pipe',
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(out.stderr).toBe('');
    const report = JSON.parse(out.stdout) as {
      accepted: number;
      count: number;
      failures: number;
      firstError: { code: string; message: string; cause: string };
      later: string;
      failure: string;
    };
    expect(report.firstError).toMatchObject({ code: 'TAPE_WRITE_FAILED', cause: 'EFBIG' });
    expect(report.failures).toBe(1);
    expect(report.later).toBe('TAPE_WRITE_FAILED');
    expect(report.count).toBe(report.accepted);
    const text = readFileSync(path.join(dir, 'lim.jsonl'), 'utf8');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(16 * 1024);
    expect(text.endsWith('\n')).toBe(true);
    const tape = await readTape(path.join(dir, 'lim.jsonl'));
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges).toHaveLength(report.count);
  });

  it('appends after a torn last line without gluing the new line to it', async () => {
    const w = await createTapeWriter({ dir, name: 'torn', header: { mode: 'record', routes: [] } });
    await w.append(exchange(0));
    await w.close();
    const fd = openSync(path.join(dir, 'torn.jsonl'), 'a');
    writeSync(fd, '{"type":"exchange","id":"0000');
    closeSync(fd);
    const again = await createTapeWriter({ dir, name: 'torn', ifExists: 'append', header: { mode: 'record', routes: [] } });
    await again.append(exchange(1));
    await again.close();
    const tape = await readTape(path.join(dir, 'torn.jsonl'));
    expect(tape.exchanges.map((e) => (e.request.body as { json: { i: number } }).json.i)).toEqual([0, 1]);
    expect(tape.problems).toHaveLength(1);
  });
});
