/**
 * HAR export: a real recorded agent tape (OpenAI JSON and streamed, Anthropic SSE, an HTTP 400, a side-file
 * body) and hand-made edge cases (binary body, MCP over stdio, tool error), exported through the CLI (in-process:
 * test/helpers/cli-in-process.ts), validated against the HAR 1.2 JSON schema (`har-schema`, the schema HAR
 * validators use), then read back: every entry, status, body and stream event must be the tape's.
 */
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHar, type Har } from '../../src/export/har.js';
import { decodeBody } from '../../src/tape/body.js';
import { sseEventText } from '../../src/tape/framing/sse.js';
import { loadTape } from '../../src/tape/tape-reader.js';
import type { Exchange } from '../../src/tape/schema.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { recordAgentTapes } from '../inspect/record-agent.js';
import { binaryCall, llmCall, toolCall, writeTape } from '../view/synthetic-tape.js';

const require = createRequire(import.meta.url);
let dir: string;

function harValidator(): (har: unknown) => string[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json') as object);
  const schemas = require('har-schema') as Record<string, { $id: string }>;
  for (const s of Object.values(schemas)) ajv.addSchema(s);
  const validate = ajv.getSchema('har.json#');
  if (!validate) throw new Error('har-schema has no har.json');
  return (har) => (validate(har) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}

/** What a HAR entry says the body was, as bytes. */
function entryBody(content: { text?: string; encoding?: string } | undefined): Buffer {
  if (content?.text === undefined) return Buffer.alloc(0);
  return Buffer.from(content.text, content.encoding === 'base64' ? 'base64' : 'utf8');
}

function expectEntryIsExchange(entry: Har['log']['entries'][number], ex: Exchange): void {
  expect(entry._tapedeck.id).toBe(ex.id);
  expect(entry.startedDateTime).toBe(ex.startedAt);
  expect(entry.request.method).toBe(ex.request.method);
  expect(entry.time).toBeCloseTo(ex.timing.durationMs, 2);
  expect(entry.timings.wait + entry.timings.receive + entry.timings.send).toBeCloseTo(ex.timing.durationMs, 2);
  if (ex.timing.ttfbMs !== undefined) expect(entry.timings.wait).toBeCloseTo(ex.timing.ttfbMs, 2);
  expect(Object.fromEntries(entry.request.headers.map((h) => [h.name, h.value]))).toEqual(ex.request.headers);
  expect(entry.request.queryString.map((q) => [q.name, q.value])).toEqual(ex.request.query);
  const sent = entry.request.postData
    ? Buffer.from(entry.request.postData.text, entry.request.postData._encoding === 'base64' ? 'base64' : 'utf8')
    : Buffer.alloc(0);
  expect(sent.equals(decodeBody(ex.request.body))).toBe(true);
  expect(entry.response.status).toBe(ex.response?.status ?? 0);
  if (ex.response?.events) {
    expect(entry.response.content.text).toBe(ex.response.events.map(sseEventText).join('') + (ex.response.tail ?? ''));
    expect(entry._eventSourceMessages?.map((m) => m.data)).toEqual(ex.response.events.map((e) => e.data));
    expect(entry._eventSourceMessages?.map((m) => m.type)).toEqual(ex.response.events.map((e) => e.event ?? 'message'));
    const t0 = Date.parse(ex.startedAt) / 1000;
    entry._eventSourceMessages?.forEach((m, k) => expect(m.time - t0).toBeCloseTo(ex.response!.events![k]!.offsetMs / 1000, 5));
  } else if (ex.response) {
    expect(entryBody(entry.response.content).equals(decodeBody(ex.response.body))).toBe(true);
    expect(entry._eventSourceMessages).toBeUndefined();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-har-'));
  await recordAgentTapes(dir);
  await writeTape(dir, 'edge', [
    llmCall(0, { events: 3 }),
    binaryCall(10),
    toolCall(20, { isError: true }),
    toolCall(30, { transport: 'stdio' }),
    llmCall(40, { status: 400 }),
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck export --format har', () => {
  it('writes a HAR 1.2 file that the HAR schema accepts and that reads back as the tape', async () => {
    const out = path.join(dir, 'agent.har');
    const r = await runCliInProcess(['export', 'agent', '--format', 'har', '--out', out, '--dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('6 HAR entries');
    const har = JSON.parse(readFileSync(out, 'utf8')) as Har;
    const validate = harValidator();
    expect(validate(har)).toEqual([]);
    // The validator does reject what is not HAR (a broken entry), so the pass above means something.
    const broken = structuredClone(har) as unknown as { log: { entries: Record<string, unknown>[] } };
    delete broken.log.entries[0]!.timings;
    (broken.log.entries[1]!.response as Record<string, unknown>).status = 'ok';
    expect(validate(broken).join('; ')).toMatch(/timings.*status|status.*timings/s);
    expect(har.log.version).toBe('1.2');
    expect(har.log.creator.name).toBe('tapedeck');

    const tape = await loadTape(dir, 'agent');
    const ordered = [...tape.exchanges].sort((a, b) => a.offsetMs - b.offsetMs || a.seq - b.seq);
    expect(har.log.entries).toHaveLength(ordered.length);
    har.log.entries.forEach((entry, i) => expectEntryIsExchange(entry, ordered[i]!));

    // The recorded details: the real upstream URL, redacted secrets, the streamed Anthropic answer's events, the 400.
    const first = har.log.entries[0]!;
    expect(first.request.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions$/);
    expect(first.request.headers.find((h) => h.name === 'authorization')?.value).toBe('[REDACTED]');
    expect(first.response.headers.find((h) => h.name === 'set-cookie')?.value).toBe('[REDACTED]');
    const stream = har.log.entries.find((e) => e._eventSourceMessages !== undefined)!;
    expect(stream.response.content.mimeType).toContain('text/event-stream');
    expect(stream._eventSourceMessages!.map((m) => m.type)).toContain('message_start');
    expect(har.log.entries.map((e) => e.response.status)).toContain(400);
    expect(har.log.entries.some((e) => (e.request.postData?.text.length ?? 0) > 70_000)).toBe(true); // the side-file body, whole
  });

  it('keeps binary bodies in base64, stdio MCP messages as tapedeck-stdio: entries, and prints to stdout without --out', async () => {
    const r = await runCliInProcess(['export', 'edge', '--format', 'har', '--dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    const har = JSON.parse(r.stdout) as Har;
    expect(harValidator()(har)).toEqual([]);
    const tape = await loadTape(dir, 'edge');
    har.log.entries.forEach((entry, i) => expectEntryIsExchange(entry, tape.exchanges[i]!));
    const bin = har.log.entries[1]!;
    expect(bin.response.content).toMatchObject({ mimeType: 'image/png', encoding: 'base64', size: 8 });
    expect(bin.request.url).toBe('http://127.0.0.1:9000/base/img.png?v=1&size=large&key=%5BREDACTED%5D');
    const stdio = har.log.entries[3]!;
    expect(stdio.request.url).toBe('tapedeck-stdio:server-everything');
    expect(stdio._transport).toBe('stdio');
    expect(har.log.entries[0]!._eventSourceMessages).toHaveLength(4);
  });

  it('is the library function the CLI prints', async () => {
    const tape = await loadTape(dir, 'edge');
    expect(toHar(tape).log.entries.map((e) => e.comment)).toEqual([
      'LLM openai gpt-4o-mini',
      'HTTP /files',
      'MCP tools/call echo',
      'MCP tools/call echo',
      'LLM openai gpt-4o-mini',
    ]);
  });

  it('refuses bad input with one line and exit 2', async () => {
    const bad = await runCliInProcess(['export', 'agent', '--format', 'pdf', '--dir', dir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual(['tapedeck export: --format must be har or otlp (got "pdf")']);
    const missing = await runCliInProcess(['export', 'nope', '--format', 'har', '--dir', dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no tape "nope"');
    const noFormat = await runCliInProcess(['export', 'agent', '--dir', dir]);
    expect(noFormat.code).toBe(2);
    const flag = await runCliInProcess(['export', 'agent', '--format', 'har', '--otlp-endpoint', 'http://x', '--dir', dir]);
    expect(flag.stderr).toContain('--otlp-endpoint goes with --format otlp');
  });
});
