/**
 * Overrides that target what they mean, through the real CLI: an agent that asks OpenAI and Anthropic (both
 * official SDKs) is recorded, then replayed with `--llm live --model gpt-4.1` (only the OpenAI call changes model),
 * with `--model /anthropic=...` (a route), and with `--live-route` (only some calls go live).
 */
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { runCli, spawnCli, waitForListening } from '../helpers/cli.js';
import { anthropicMessage, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let dir: string;
let llm: ScriptedUpstream;

async function serve(args: string[]): Promise<{ url: string; stderr: () => string; stop: () => Promise<void> }> {
  const child = spawnCli([...args, '--dir', dir, '--port', '0']);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await waitForListening(child);
  return { url, stderr: () => stderr, stop: () => new Promise((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))) };
}

/** Plans with OpenAI, writes with Anthropic. */
async function agent(url: string): Promise<{ plan: string | null; text: string }> {
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/openai/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: `${url}/anthropic`, maxRetries: 0 });
  const plan = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    temperature: 0.2,
    messages: [{ role: 'user', content: 'Plan a haiku' }],
  });
  const msg = await anthropic.messages.create({
    model: 'claude-sonnet-4-6',
    max_tokens: 100,
    messages: [{ role: 'user', content: `Write it: ${plan.choices[0]!.message.content}` }],
  });
  const block = msg.content[0];
  return { plan: plan.choices[0]!.message.content, text: block?.type === 'text' ? block.text : '' };
}

const sentModels = (from: number): string[] => llm.requests.slice(from).map((r) => (r.body as { model: string }).model);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-targeted-'));
  llm = await startScriptedUpstream((req) => {
    const body = req.body as { model: string };
    if (req.url.includes('/messages')) return anthropicMessage({ model: body.model, text: `written by ${body.model}` });
    return openaiChat({ model: body.model, content: `plan by ${body.model}` });
  });
  const rec = await serve(['record', '--tape', 'two', '--route', `/openai=${llm.url}`, '--route', `/anthropic=${llm.url}`]);
  try {
    expect(await agent(rec.url)).toEqual({ plan: 'plan by gpt-4o-mini', text: 'written by claude-sonnet-4-6' });
  } finally {
    await rec.stop();
  }
});
afterAll(async () => {
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('replay --llm live with targeted overrides', () => {
  it('--model gpt-4.1 changes only the OpenAI call; --temperature follows it; the preflight shows each route', async () => {
    const before = llm.requests.length;
    const rep = await serve([
      'replay',
      '--tape',
      'two',
      '--save-as',
      'two-41',
      '--llm',
      'live',
      '--model',
      'gpt-4.1',
      '--temperature',
      '0',
    ]);
    try {
      expect(await agent(rep.url)).toEqual({ plan: 'plan by gpt-4.1', text: 'written by claude-sonnet-4-6' });
    } finally {
      await rep.stop();
    }
    expect(sentModels(before)).toEqual(['gpt-4.1', 'claude-sonnet-4-6']);
    const [openaiBody, anthropicBody] = llm.requests.slice(before).map((r) => r.body as Record<string, unknown>);
    expect(openaiBody!.temperature).toBe(0);
    expect(anthropicBody!.temperature).toBeUndefined(); // the temperature goes where the model override goes
    expect(rep.stderr()).toContain('this run: /openai: model "gpt-4o-mini" -> "gpt-4.1" (1 call(s))');
    expect(rep.stderr()).toContain('this run: /openai: temperature 0.2 -> 0 (1 call(s))');
    expect(rep.stderr()).toContain('this run: /anthropic: llm "tape" -> "live" (1 call(s))');
    expect(rep.stderr()).not.toContain('/anthropic: model');
    const tape = await readTape(path.join(dir, 'two-41.jsonl'));
    expect(tape.header.replayOf).toMatchObject({
      overrides: { model: 'gpt-4.1', temperature: 0 },
      targeted: [
        { field: 'model', value: 'gpt-4.1', provider: 'openai' },
        { field: 'temperature', value: 0, provider: 'openai' },
      ],
    });
  });

  it('--model ROUTE=MODEL targets a route, --live-route keeps the other route on the tape', async () => {
    const before = llm.requests.length;
    const rep = await serve([
      'replay',
      '--tape',
      'two',
      '--save-as',
      'two-haiku',
      '--live-route',
      '/anthropic',
      '--model',
      '/anthropic=claude-haiku-4-5',
    ]);
    try {
      expect(await agent(rep.url)).toEqual({ plan: 'plan by gpt-4o-mini', text: 'written by claude-haiku-4-5' });
    } finally {
      await rep.stop();
    }
    expect(sentModels(before)).toEqual(['claude-haiku-4-5']); // the OpenAI call came from the tape
    expect(rep.stderr()).toContain('this run: /anthropic: model "claude-sonnet-4-6" -> "claude-haiku-4-5" (1 call(s))');
    expect(rep.stderr()).toContain('this run: /openai: answered from the tape (1 call(s))');
    const tape = await readTape(path.join(dir, 'two-haiku.jsonl'));
    expect(tape.exchanges.map((e) => e.match?.kind).sort()).toEqual(['exact', 'live']);
    expect(tape.header.replayOf?.liveRoutes).toEqual(['/anthropic']);
  });

  it('refuses a model no provider family claims, with the way out', async () => {
    const r = await runCli(['replay', '--tape', 'two', '--dir', dir, '--llm', 'live', '--model', 'llama-3.3-70b']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot tell which provider\'s calls the model "llama-3.3-70b" is for');
    expect(r.stderr).toContain('--model /openai=MODEL');
  });
});
