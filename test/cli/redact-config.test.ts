/**
 * Secrets named in the config (`redact.query`, `redact.fields`) are redacted on the tape and still match in replay
 * through the CLI, and a miss quotes them redacted (issue 13 #2, wiring).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, waitForListening } from '../helpers/cli.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let dir: string;
let upstream: ScriptedUpstream;
let config: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-redact-config-'));
  upstream = await startScriptedUpstream(() => openaiChat({ content: 'signed answer' }));
  config = path.join(dir, 'tapedeck.yaml');
  writeFileSync(config, `dir: ${dir}\nroutes:\n  /gw: ${upstream.url}\nredact:\n  query: [signature]\n  fields: [session_code]\n`);
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (url: string, question: string): Promise<Response> =>
  fetch(`${url}/gw/v1/chat/completions?signature=sig-abc-123`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', session_code: 'zz-very-secret-code', messages: [{ role: 'user', content: question }] }),
  });

async function serve(args: string[], run: (url: string) => Promise<void>): Promise<void> {
  const child = spawnCli([...args, '--config', config, '--port', '0']);
  try {
    await run(await waitForListening(child));
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

describe('secrets named in the config', () => {
  it('are redacted on the tape, match in replay, and are quoted redacted in a miss', async () => {
    await serve(['record', '--tape', 'signed'], async (url) => {
      expect((await ask(url, 'first')).status).toBe(200);
    });
    const text = readFileSync(path.join(dir, 'signed.jsonl'), 'utf8');
    expect(text).not.toContain('sig-abc-123');
    expect(text).not.toContain('zz-very-secret-code');

    await serve(['replay', '--tape', 'signed', '--save-as', 'signed-replay'], async (url) => {
      const hit = await ask(url, 'first');
      expect(hit.status).toBe(200);
      expect(hit.headers.get('x-tapedeck-match')).toBe('exact');
      const miss = await ask(url, 'second');
      expect(miss.status).toBe(404);
      const body = await miss.text();
      expect(body).toContain('tapedeck_miss');
      expect(body).not.toContain('sig-abc-123');
      expect(body).not.toContain('zz-very-secret-code');
    });
    const replayTape = readFileSync(path.join(dir, 'signed-replay.jsonl'), 'utf8');
    expect(replayTape).not.toContain('sig-abc-123');
    expect(replayTape).not.toContain('zz-very-secret-code');
  });
});
