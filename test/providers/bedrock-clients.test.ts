/**
 * AWS Bedrock Runtime end to end, as users run it: the AWS SDK for JavaScript (its default HTTP/2, Converse and
 * ConverseStream) and boto3 (`converse`, `converse_stream`) record through tapedeck against a scripted Bedrock that
 * checks SigV4 for its own host as AWS does. The clients sign with their own credentials for tapedeck's address;
 * tapedeck signs again with the credentials in its environment. The upstream stops, the calls replay with the same
 * output and no upstream hit; no key, token or signature is on the tape; a cut after 2 events gives the client 2.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../src/engine/faults/fault-plan.js';
import { parseFaultRule } from '../../src/engine/faults/fault-rules.js';
import { startProxy } from '../../src/front/server.js';
import { REDACTED } from '../../src/tape/redaction/redact.js';
import { scanTapeFile } from '../../src/tape/redaction/scan.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { startBedrockUpstream, type BedrockUpstream } from '../helpers/bedrock-upstream.js';

const TAPEDECK_CREDS = {
  accessKeyId: 'AKIDTAPEDECKE2E',
  secretAccessKey: 'tapedeck-e2e-secret',
  sessionToken: 'tapedeck-e2e-session-token',
};
const CLIENT_CREDS = { accessKeyId: 'AKIDCLIENTE2E', secretAccessKey: 'client-e2e-secret', sessionToken: 'client-e2e-session-token' };
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const hasBoto3 = spawnSync('python3', ['-c', 'import boto3'], { stdio: 'ignore' }).status === 0;
if (!hasBoto3) console.log('skipping the boto3 half: python3 with boto3 is not installed (pip install boto3)');

let dir: string;
let bedrock: BedrockUpstream;
const saved: Record<string, string | undefined> = {};
const VARS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_EC2_METADATA_DISABLED', 'AWS_PROFILE'];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bedrock-'));
  bedrock = await startBedrockUpstream(TAPEDECK_CREDS);
  // tapedeck (in this process) finds its credentials as the AWS SDKs do: here, the standard variables.
  for (const v of VARS) saved[v] = process.env[v];
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: TAPEDECK_CREDS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TAPEDECK_CREDS.secretAccessKey,
    AWS_SESSION_TOKEN: TAPEDECK_CREDS.sessionToken,
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  delete process.env.AWS_PROFILE;
});
afterAll(async () => {
  await bedrock.close();
  for (const v of VARS)
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  rmSync(dir, { recursive: true, force: true });
});

const js = (base: string): BedrockRuntimeClient =>
  new BedrockRuntimeClient({ region: 'us-east-1', endpoint: `${base}/bedrock`, credentials: CLIENT_CREDS, maxAttempts: 1 });

/** The JS agent: one Converse, one ConverseStream; what it prints. */
async function jsAgent(base: string): Promise<string[]> {
  const client = js(base);
  try {
    const out: string[] = [];
    const said = await client.send(
      new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'js converse' }] }] }),
    );
    out.push(`converse: ${said.output?.message?.content?.[0]?.text} (${said.stopReason}, ${said.usage?.totalTokens} tokens)`);
    const streamed = await client.send(
      new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'js stream' }] }] }),
    );
    const parts: string[] = [];
    for await (const ev of streamed.stream ?? []) if (ev.contentBlockDelta?.delta?.text) parts.push(ev.contentBlockDelta.delta.text);
    out.push(`stream: ${parts.join('|')}`);
    return out;
  } finally {
    client.destroy();
  }
}

const PY = `
import boto3, sys
c = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=sys.argv[1],
                 aws_access_key_id="${CLIENT_CREDS.accessKeyId}", aws_secret_access_key="${CLIENT_CREDS.secretAccessKey}",
                 aws_session_token="${CLIENT_CREDS.sessionToken}")
r = c.converse(modelId="${MODEL}", messages=[{"role": "user", "content": [{"text": "py converse"}]}])
print("converse:", r["output"]["message"]["content"][0]["text"], r["stopReason"])
s = c.converse_stream(modelId="${MODEL}", messages=[{"role": "user", "content": [{"text": "py stream"}]}])
print("stream:", "|".join(e["contentBlockDelta"]["delta"]["text"] for e in s["stream"] if "contentBlockDelta" in e))
`;

/** The boto3 agent, in a child process (asynchronously: tapedeck answers it from this process's event loop). */
async function pyAgent(base: string): Promise<string[]> {
  const file = path.join(dir, 'agent.py');
  writeFileSync(file, PY);
  const child = spawn('python3', [file, `${base}/bedrock`], { env: { PATH: process.env.PATH, AWS_EC2_METADATA_DISABLED: 'true' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`boto3 agent failed: ${err}`);
  return out.trim().split('\n');
}

describe('AWS Bedrock Runtime clients', () => {
  it('JS SDK (HTTP/2) and boto3: recorded with SigV4 signed again, replayed with the same output and no upstream hit', async () => {
    const routes = [{ prefix: '/bedrock', upstream: bedrock.url }];
    const rec = await startProxy({ mode: 'record', tape: 'bedrock', dir, port: 0, routes });
    let jsOut: string[];
    let pyOut: string[] = [];
    try {
      jsOut = await jsAgent(rec.url);
      if (hasBoto3) pyOut = await pyAgent(rec.url);
    } finally {
      await rec.close();
    }
    expect(bedrock.requests.map((r) => r.signatureError)).toEqual(bedrock.requests.map(() => undefined));
    expect(jsOut).toEqual(['converse: You asked: js converse (end_turn, 16 tokens)', 'stream: You |asked: |js |stream']);
    if (hasBoto3) expect(pyOut).toEqual(['converse: You asked: py converse end_turn', 'stream: You |asked: |py |stream']);

    const text = readFileSync(path.join(dir, 'bedrock.jsonl'), 'utf8');
    for (const secret of [
      TAPEDECK_CREDS.secretAccessKey,
      TAPEDECK_CREDS.sessionToken,
      CLIENT_CREDS.secretAccessKey,
      CLIENT_CREDS.sessionToken,
      'Signature=',
    ])
      expect(text).not.toContain(secret);
    expect((await scanTapeFile(path.join(dir, 'bedrock.jsonl'))).findings).toEqual([]);
    // The commands as a user runs them: `scan` finds nothing, `show` names each call's model.
    expect(await runCliInProcess(['scan', 'bedrock', '--dir', dir])).toMatchObject({
      code: 0,
      stdout: 'no credentials found in 1 tape(s)\n',
    });
    const show = await runCliInProcess(['show', 'bedrock', '--dir', dir, '--wide']);
    const steps = show.stdout.split('\n').filter((l) => /^\s*\d+\s+\+\S+\s+LLM /.test(l));
    expect(steps.map((l) => l.trim().split(/\s+/).slice(3, 5))).toEqual(
      Array.from({ length: hasBoto3 ? 4 : 2 }, () => ['/bedrock', MODEL]),
    );
    const tape = await readTape(path.join(dir, 'bedrock.jsonl'));
    // The signature and the session token are redacted; the body's hash and the signing date (no secrets) stay readable.
    for (const e of tape.exchanges) {
      const h = Object.fromEntries(Object.entries(e.request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      expect(h.authorization).toBe(REDACTED);
      expect(h['x-amz-security-token']).toBe(REDACTED);
      expect(h['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    }
    // The JS SDK sends the body's hash (boto3 does not, for Bedrock).
    expect(tape.exchanges[0]?.request.headers?.['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(tape.exchanges.map((e) => [e.llm?.provider, e.llm?.api, e.llm?.model, e.response?.events?.length ?? 0])).toEqual([
      ['bedrock', 'converse', MODEL, 0],
      ['bedrock', 'converse', MODEL, 8],
      ...(hasBoto3
        ? [
            ['bedrock', 'converse', MODEL, 0],
            ['bedrock', 'converse', MODEL, 8],
          ]
        : []),
    ]);
    // The frames are read on the tape: named, their payload as text.
    expect(tape.exchanges[1]?.response?.events?.[1]).toMatchObject({
      event: 'contentBlockDelta',
      data: '{"contentBlockIndex":0,"delta":{"text":"You "}}',
    });

    const hits = bedrock.requests.length;
    await bedrock.close();
    // Replay needs no credentials, and checks none.
    for (const v of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) delete process.env[v];
    const rep = await startProxy({ mode: 'replay', tape: 'bedrock', dir, port: 0, routes });
    try {
      expect(await jsAgent(rep.url)).toEqual(jsOut);
      if (hasBoto3) expect(await pyAgent(rep.url)).toEqual(pyOut);
    } finally {
      await rep.close();
    }
    expect(bedrock.requests.length).toBe(hits);

    // A cut after 2 events: the client gets exactly 2, then the stream breaks off.
    const cut = await startProxy({
      mode: 'replay',
      tape: 'bedrock',
      dir,
      port: 0,
      routes,
      saveAs: 'bedrock-cut',
      faults: createFaultPlan([parseFaultRule(`{when: {model: '${MODEL}'}, then: {cut: {afterEvents: 2}}}`)]),
    });
    const got: string[] = [];
    let broke = false;
    const client = js(cut.url);
    try {
      const streamed = await client.send(
        new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'js stream' }] }] }),
      );
      for await (const ev of streamed.stream ?? []) got.push(Object.keys(ev)[0] ?? '');
    } catch {
      broke = true;
    } finally {
      client.destroy();
      await cut.close();
    }
    expect(got).toEqual(['messageStart', 'contentBlockDelta']);
    // (Over HTTP/2 the SDK ends its iteration at the stream's reset, with or without an error.)
    void broke;
  });
});
