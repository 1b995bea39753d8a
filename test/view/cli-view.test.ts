/** `tapedeck view` as a command: the URL on stdout, a clean stop on SIGINT, one line and exit 2 for bad input. */
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli, waitForListening } from '../helpers/cli.js';
import { llmCall, writeTape } from './synthetic-tape.js';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-cli-view-'));
  await writeTape(dir, 'one', [llmCall(0)]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck view', () => {
  it('prints the URL of the tape it opens, serves it on 127.0.0.1, and stops cleanly on SIGINT', async () => {
    const child = spawnCli(['view', 'one', '--dir', dir, '--no-open', '--port', '0']);
    try {
      const url = await waitForListening(child);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#\/tape\?name=one$/);
      const base = url.replace(/#.*$/, '');
      const tape = (await (await fetch(`${base}api/tape?name=one`)).json()) as { total: number };
      expect(tape.total).toBe(1);
      // A request that names another host (DNS rebinding) is refused even on the right socket.
      const port = new URL(base).port;
      const refused = await new Promise<number | undefined>((resolve, reject) =>
        get(
          { host: '127.0.0.1', port, path: '/api/tapes', headers: { host: `rebind.example:${port}` } },
          (res) => (res.resume(), resolve(res.statusCode)),
        ).on('error', reject),
      );
      expect(refused).toBe(403);
      const code = await new Promise<number | null>((resolve) => (child.once('exit', resolve), child.kill('SIGINT')));
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses bad input with one line and exit 2', async () => {
    const port = await runCli(['view', '--dir', dir, '--port', 'eighty', '--no-open']);
    expect(port.code).toBe(2);
    expect(port.stderr.trim()).toBe('tapedeck view: --port must be a number from 0 to 65535 (got "eighty")');
    const missing = await runCli(['view', 'nope', '--dir', dir, '--no-open']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('no tape "nope"');
    const flag = await runCli(['view', '--bogus']);
    expect(flag.code).toBe(2);
  });
});
