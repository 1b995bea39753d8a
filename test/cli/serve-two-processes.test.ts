import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, waitForListening } from '../helpers/cli.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let dir: string;
let upstream: ScriptedUpstream;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-serve-two-'));
  upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A `tapedeck serve` process on the shared folder: its URL, what it printed, and a stop that waits for its exit. */
async function startServeCli(
  args: string[],
): Promise<{ url: string; pid: number; stop(): Promise<{ code: number | null; stderr: string }> }> {
  const child = spawnCli(['serve', '--dir', dir, '--port', '0', ...args]);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const url = await waitForListening(child);
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      return { code: await closed, stderr };
    },
  };
}

const ask = async (baseURL: string, content: string): Promise<string> => {
  const openai = new OpenAI({ apiKey: 'sk-two-SECRET-0123', baseURL, maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  return answer.choices[0]?.message.content ?? '';
};

describe('two tapedeck serve processes on one folder', () => {
  it('the second refuses to replay a tape the first is still recording, naming its pid; once it is closed, it replays', async () => {
    const first = await startServeCli(['--route', `/openai=${upstream.url}`]);
    const second = await startServeCli(['--route', '/openai=http://127.0.0.1:9']);
    try {
      // The first serve records the tape and keeps it open (its test is not over).
      expect(await ask(`${first.url}/@shared/openai/v1`, 'question')).toBe('echo: question');
      // Without the refusal the second replays what the tape holds so far: a request not on it yet is a miss.
      const err = await ask(`${second.url}/@shared/openai/v1`, 'a question not recorded yet').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.ConflictError);
      expect((err as Error).message).toContain(`being recorded by pid ${first.pid}`);

      // The test is over: the first closes the tape, and the second replays it (its failed opening is not kept).
      expect((await fetch(`${first.url}/@shared`, { method: 'DELETE' })).status).toBe(200);
      expect(await ask(`${second.url}/@shared/openai/v1`, 'question')).toBe('echo: question');
    } finally {
      const [a, b] = [await first.stop(), await second.stop()];
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      expect(b.stderr).toMatch(/1 tape\(s\): 0 recorded, 1 replayed/);
    }
    expect(upstream.requests).toHaveLength(1);
  });
});
