/**
 * The cloud and local providers' official clients, end to end as a user runs them: each records against one scripted
 * upstream on 127.0.0.1 (Azure OpenAI, Vertex AI for Anthropic and Gemini, Ollama), the upstream stops, and the same
 * calls replay from the tape with the same output and no upstream hit. No key or token reaches a tape.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { GoogleGenAI } from '@google/genai';
import { OAuth2Client } from 'google-auth-library';
import { Ollama } from 'ollama';
import { AzureOpenAI } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/front/server.js';
import { scanTapeFile } from '../../src/tape/redaction/scan.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { readBody, startLocalServer, type LocalServer } from '../helpers/local-server.js';

const AZURE_KEY = 'azure-key-0123456789abcdef';
const GOOGLE_TOKEN = 'ya29.test-access-token-0123456789';

let dir: string;
let upstream: LocalServer;
let upstreamUrl: string;
const hits: string[] = [];

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? body.contents) as { content?: unknown; parts?: { text: string }[] }[] | undefined;
  const m = messages?.[messages.length - 1];
  if (m?.parts) return m.parts[0]?.text ?? '';
  return typeof m?.content === 'string'
    ? m.content
    : String((m?.content as { text?: string }[] | undefined)?.[0]?.text ?? body.prompt ?? '');
}

/** One upstream for every provider of this file, answering in each API's own shape. */
function answer(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
  const url = req.url ?? '/';
  hits.push(url);
  const said = `You asked: ${lastUserText(body)}`;
  // Anthropic names each event (`event: message_start`); Google does not.
  const sse = (events: string[], eol = '\n'): void => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const named = (e: string): string => (e.startsWith('{"type":') ? `event: ${(JSON.parse(e) as { type: string }).type}${eol}` : '');
    res.end(events.map((e) => `${named(e)}data: ${e}${eol}${eol}`).join(''));
  };
  const json = (b: unknown): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(b));
  };
  if (url.includes('/openai/deployments/')) {
    if (req.headers['api-key'] !== AZURE_KEY && req.headers.authorization !== `Bearer ${GOOGLE_TOKEN}`)
      return void res.writeHead(401).end();
    return json({
      id: 'c1',
      object: 'chat.completion',
      model: 'gpt-4o-2024-08-06',
      choices: [{ index: 0, message: { role: 'assistant', content: said }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
    });
  }
  if (url.includes('/publishers/anthropic/')) {
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4',
      content: [{ type: 'text', text: said }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 3, output_tokens: 3 },
    };
    if (!url.endsWith(':streamRawPredict')) return json(message);
    return sse([
      JSON.stringify({ type: 'message_start', message: { ...message, content: [] } }),
      JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ...said
        .split(' ')
        .map((w, i) =>
          JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: i === 0 ? w : ` ${w}` } }),
        ),
      JSON.stringify({ type: 'content_block_stop', index: 0 }),
      JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
      JSON.stringify({ type: 'message_stop' }),
    ]);
  }
  if (url.includes('/publishers/google/')) {
    const chunk = (text: string): string =>
      JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text }] } }], modelVersion: 'gemini-2.5-flash' });
    // Google ends each event with CRLF CRLF.
    if (url.includes(':streamGenerateContent'))
      return sse(
        said.split(' ').map((w, i) => chunk(i === 0 ? w : ` ${w}`)),
        '\r\n',
      );
    return json(JSON.parse(chunk(said)));
  }
  if (url.endsWith('/api/chat')) {
    if (body.stream === false)
      return json({
        model: body.model,
        message: { role: 'assistant', content: said },
        done: true,
        done_reason: 'stop',
        prompt_eval_count: 3,
        eval_count: 3,
      });
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const lines = said
      .split(' ')
      .map((w, i) => JSON.stringify({ model: body.model, message: { role: 'assistant', content: i === 0 ? w : ` ${w}` }, done: false }));
    lines.push(
      JSON.stringify({
        model: body.model,
        message: { role: 'assistant', content: '' },
        done: true,
        done_reason: 'stop',
        prompt_eval_count: 3,
        eval_count: 3,
      }),
    );
    return void res.end(lines.map((l) => `${l}\n`).join(''));
  }
  res.writeHead(404).end();
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-cloud-'));
  upstream = await startLocalServer((req, res) => {
    void readBody(req).then((raw) => answer(req, res, raw.length ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {}));
  });
  upstreamUrl = upstream.url;
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What an agent built on each client prints: the same in record and in replay. */
async function agent(base: string): Promise<string[]> {
  const out: string[] = [];
  const azure = new AzureOpenAI({
    endpoint: `${base}/azure`,
    apiKey: AZURE_KEY,
    apiVersion: '2024-10-21',
    deployment: 'gpt4o-prod',
    maxRetries: 0,
  });
  const chat = await azure.chat.completions.create({ model: '', messages: [{ role: 'user', content: 'azure?' }] });
  out.push(`azure: ${chat.choices[0]?.message.content}`);
  const entra = new AzureOpenAI({
    endpoint: `${base}/azure`,
    azureADTokenProvider: async () => GOOGLE_TOKEN,
    apiVersion: '2024-10-21',
    deployment: 'gpt4o-prod',
    maxRetries: 0,
  });
  out.push(
    `entra: ${(await entra.chat.completions.create({ model: '', messages: [{ role: 'user', content: 'entra?' }] })).choices[0]?.message.content}`,
  );

  // A Google access token as `gcloud auth print-access-token` gives one (no metadata server, no token endpoint).
  const authClient = new OAuth2Client();
  authClient.setCredentials({ access_token: GOOGLE_TOKEN, expiry_date: Date.now() + 3600_000 });
  const vertex = new AnthropicVertex({ baseURL: `${base}/vertex/v1`, region: 'us-east5', projectId: 'proj-1', authClient, maxRetries: 0 });
  const msg = await vertex.messages.create({
    model: 'claude-sonnet-4@20250514',
    max_tokens: 50,
    messages: [{ role: 'user', content: 'vertex?' }],
  });
  out.push(`vertex-claude: ${msg.content[0]?.type === 'text' ? msg.content[0].text : ''}`);
  const streamed: string[] = [];
  const stream = vertex.messages.stream({
    model: 'claude-sonnet-4@20250514',
    max_tokens: 50,
    messages: [{ role: 'user', content: 'stream?' }],
  });
  stream.on('text', (t) => streamed.push(t));
  await stream.finalMessage();
  out.push(`vertex-claude-stream: ${streamed.join('|')}`);

  const genai = new GoogleGenAI({
    vertexai: true,
    project: 'proj-1',
    location: 'us-central1',
    httpOptions: { baseUrl: `${base}/vertex` },
    googleAuthOptions: { authClient },
  });
  out.push(`vertex-gemini: ${(await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'gemini?' })).text}`);
  const parts: string[] = [];
  for await (const c of await genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'gemini stream?' }))
    parts.push(c.text ?? '');
  out.push(`vertex-gemini-stream: ${parts.join('|')}`);

  const ollama = new Ollama({ host: `${base}/ollama` });
  out.push(
    `ollama: ${(await ollama.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'ollama?' }], stream: false })).message.content}`,
  );
  const lines: string[] = [];
  for await (const part of await ollama.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'ollama stream?' }], stream: true }))
    lines.push(part.message.content);
  out.push(`ollama-stream: ${lines.join('|')}`);
  return out;
}

describe('cloud and local clients, recorded and replayed', () => {
  it('AzureOpenAI (api-key and Entra), @anthropic-ai/vertex-sdk, @google/genai on Vertex, ollama: same output in replay, 0 upstream hits', async () => {
    const routes = ['/azure', '/vertex', '/ollama'].map((prefix) => ({ prefix, upstream: upstreamUrl }));
    const rec = await startProxy({ mode: 'record', tape: 'cloud', dir, port: 0, routes });
    let recorded: string[];
    try {
      recorded = await agent(rec.url);
    } finally {
      await rec.close();
    }
    expect(recorded).toEqual([
      'azure: You asked: azure?',
      'entra: You asked: entra?',
      'vertex-claude: You asked: vertex?',
      'vertex-claude-stream: You| asked:| stream?',
      'vertex-gemini: You asked: gemini?',
      'vertex-gemini-stream: You| asked:| gemini| stream?',
      'ollama: You asked: ollama?',
      'ollama-stream: You| asked:| ollama| stream?|',
    ]);
    const text = readFileSync(path.join(dir, 'cloud.jsonl'), 'utf8');
    expect(text).not.toContain(AZURE_KEY);
    expect(text).not.toContain(GOOGLE_TOKEN);
    // What `tapedeck scan` reports: nothing.
    expect((await scanTapeFile(path.join(dir, 'cloud.jsonl'))).findings).toEqual([]);
    const tape = await readTape(path.join(dir, 'cloud.jsonl'));
    expect(tape.exchanges.map((e) => [e.llm?.provider, e.llm?.model, e.llm?.streamed])).toEqual([
      ['azure-openai', 'gpt4o-prod', false],
      ['azure-openai', 'gpt4o-prod', false],
      ['vertex', 'claude-sonnet-4@20250514', false],
      ['vertex', 'claude-sonnet-4@20250514', true],
      ['gemini', 'gemini-2.5-flash', false],
      ['gemini', 'gemini-2.5-flash', true],
      ['ollama', 'llama3.2', false],
      ['ollama', 'llama3.2', true],
    ]);
    // The commands as a user runs them: `scan` finds nothing, `show` names each call's model.
    expect(await runCliInProcess(['scan', 'cloud', '--dir', dir])).toMatchObject({
      code: 0,
      stdout: 'no credentials found in 1 tape(s)\n',
    });
    const show = await runCliInProcess(['show', 'cloud', '--dir', dir, '--wide']);
    expect(show.code).toBe(0);
    const steps = show.stdout.split('\n').filter((l) => /^\s*\d+\s+\+\S+\s+LLM /.test(l));
    expect(steps.map((l) => l.trim().split(/\s+/).slice(3, 5))).toEqual([
      ['/azure', 'gpt4o-prod'],
      ['/azure', 'gpt4o-prod'],
      ['/vertex', 'claude-sonnet-4@20250514'],
      ['/vertex', 'claude-sonnet-4@20250514'],
      ['/vertex', 'gemini-2.5-flash'],
      ['/vertex', 'gemini-2.5-flash'],
      ['/ollama', 'llama3.2'],
      ['/ollama', 'llama3.2'],
    ]);
    const before = hits.length;
    const rep = await startProxy({ mode: 'replay', tape: 'cloud', dir, port: 0, routes });
    try {
      expect(await agent(rep.url)).toEqual(recorded);
    } finally {
      await rep.close();
    }
    expect(hits.length).toBe(before);
  });
});
