import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, serveWhile as serveIn } from '../helpers/cli.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let dir: string;
let upstream: ScriptedUpstream;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-serve-cli-'));
  upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const serveWhile = (args: string[], use: (url: string) => Promise<void>): ReturnType<typeof serveIn> => serveIn(dir, args, use);

const ask = async (baseURL: string, content: string): Promise<string> => {
  const openai = new OpenAI({ apiKey: 'sk-cli-SECRET-0123', baseURL, maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  return answer.choices[0]?.message.content ?? '';
};

describe('tapedeck serve (the CLI)', () => {
  it('records per-test tapes, then replays them with the upstream gone, and reports what each tape did (text and --json)', async () => {
    const first = await serveWhile(['--route', `/openai=${upstream.url}`, '--json'], async (url) => {
      expect(await Promise.all([ask(`${url}/@alpha/openai/v1`, 'a'), ask(`${url}/@beta/openai/v1`, 'b')])).toEqual(['echo: a', 'echo: b']);
    });
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/2 tape\(s\): 2 recorded, 0 replayed/);
    expect(first.stderr).toMatch(/alpha\s+recorded 1 exchange/);
    const json = JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { tapes: { tape: string; mode: string; recorded: number }[] };
    expect(json.tapes.map((t) => [t.tape, t.mode, t.recorded]).sort()).toEqual([
      ['alpha', 'record', 1],
      ['beta', 'record', 1],
    ]);

    const second = await serveWhile(['--route', '/openai=http://127.0.0.1:9'], async (url) => {
      expect(await ask(`${url}/@alpha/openai/v1`, 'a')).toBe('echo: a');
      await expect(ask(`${url}/@alpha/openai/v1`, 'not recorded')).rejects.toThrow(/404/);
    });
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/1 tape\(s\): 0 recorded, 1 replayed, 1 request\(s\) missed/);
    expect(second.stderr).toMatch(/alpha\s+replayed 1, missed 1/);
  });

  it('rejects a bad mode or tape name with one clear line', async () => {
    const bad = await runCli(['serve', '--dir', dir, '--mode', 'sometimes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('tapedeck serve: --mode must be auto, record, replay or refresh (got "sometimes")');
    const name = await runCli(['serve', '--dir', dir, '--tape', '../up']);
    expect(name.code).toBe(2);
    expect(name.stderr.trim().split('\n')).toHaveLength(1);
  });
});
