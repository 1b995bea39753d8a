/**
 * What a client has is on the tape (issue 13 #4), and a tape that cannot be written is loud (#3): the real CLI,
 * killed with SIGKILL the instant a client sees the end of its answer; and recording on a disk that fills up.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { askChat } from '../helpers/ask-chat.js';
import { CLI_MAIN, spawnCli, waitForListening } from '../helpers/cli.js';
import { lastUserText, openaiChat, openaiChatStream, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let dir: string;
let upstream: ScriptedUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-safety-'));
  upstream = await startScriptedUpstream((req) => {
    const text = lastUserText(req.body);
    return text.startsWith('stream')
      ? openaiChatStream({ parts: [`${text} `, 'done'] })
      : openaiChat({ content: `echo: ${text} ${'x'.repeat(600)}` });
  });
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a completed answer is on the tape', () => {
  it('after kill -9 the instant a client sees the end of its answer, every completed answer is on the tape (10 rounds)', async () => {
    for (let round = 0; round < 10; round++) {
      const tape = `crash-${round}`;
      const child = spawnCli(['record', '--tape', tape, '--dir', dir, '--port', '0', '--route', `/openai=${upstream.url}`]);
      const url = await waitForListening(child);
      const exited = new Promise((r) => child.once('exit', r));
      const completed: string[] = [];
      const prompts = Array.from({ length: 24 }, (_, i) => `${i % 2 === 0 ? 'stream' : 'json'}-${round}-${i}`);
      await Promise.all(
        prompts.map((p) =>
          askChat(url, p, () => {
            completed.push(p);
            child.kill('SIGKILL'); // at once, in the callback that saw the end
          }),
        ),
      );
      await exited;
      const onTape = (await readTape(path.join(dir, `${tape}.jsonl`))).exchanges.map((e) =>
        lastUserText((e.request.body as { json: unknown }).json),
      );
      expect(completed.length, `round ${round}`).toBeGreaterThan(0);
      for (const p of completed) expect(onTape, `round ${round}: ${p} completed but is not on the tape`).toContain(p);
    }
  }, 120_000);
});

describe('a tape that cannot be written', () => {
  it('says so once on stderr, answers 503 after, prints the count that is on disk, exits 1', async () => {
    const file = path.join(dir, 'full.jsonl');
    // A real write error: a file-size limit (SIGXFSZ ignored, so the write fails with EFBIG instead of killing us).
    const cli = `exec "${process.execPath}" "${CLI_MAIN}" record --tape full --dir "${dir}" --port 0 --route /openai=${upstream.url}`;
    const child = spawn('bash', ['-c', `trap '' XFSZ; ulimit -f 12; ${cli}`], {
      cwd: ROOT,
      stdio: 'pipe',
    }) as ChildProcessWithoutNullStreams;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await waitForListening(child);
    const results: { status: number; complete: boolean }[] = [];
    for (let i = 0; i < 40; i++) results.push(await askChat(url, `json-fill-${i}`, () => undefined));
    const code = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await code).toBe(1);

    const firstRefusal = results.findIndex((r) => r.status === 503);
    expect(firstRefusal).toBeGreaterThan(0);
    expect(results.slice(firstRefusal).every((r) => r.status === 503)).toBe(true);
    const answered = results.filter((r) => r.status === 200 && r.complete).length;
    const tape = await readTape(file);
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges).toHaveLength(answered);
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
    expect(stderr.match(/nothing more will reach the tape/g)).toHaveLength(1);
    expect(stderr).toContain(`${answered} exchange(s) on tape "full"`);
    expect(stderr).toContain('the tape is incomplete');
  });
});
