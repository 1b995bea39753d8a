/**
 * `tapedeck replay` with an agent whose user now declines what the recording's user accepted (an elicitation in the
 * middle of a tool call): the agent's call fails, and the run's end says so (a miss, the first by its step) and
 * `--expect tools` lists the call as not made. The same answer replays clean.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToEnd } from '../helpers/cli.js';
import { startSdkMcpServer, type SdkMcpServer } from '../helpers/sdk-mcp-server.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/agents/booking-agent.mjs');
let dir: string;
let server: SdkMcpServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-contract-'));
  server = await startSdkMcpServer();
  const rec = await runToEnd([
    'record',
    'booking',
    '--dir',
    dir,
    '--route',
    `/deployed/mcp=${server.url}`,
    '--',
    process.execPath,
    AGENT,
    'accept',
  ]);
  await server.stop();
  if (rec.code !== 0 || !rec.stdout.includes('result: booked Lisbon')) throw new Error(`record failed: ${rec.stdout} ${rec.stderr}`);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const replay = (saveAs: string, answer: string) =>
  runToEnd(['replay', 'booking', '--dir', dir, '--save-as', saveAs, '--expect', 'tools', '--', process.execPath, AGENT, answer]);

describe('a server request answered differently on replay', () => {
  it('fails in the client, in the end-of-run line and by --expect', async () => {
    const run = await replay('declined', 'decline');
    expect(run.stdout).toMatch(/error: .*the client answered the server's elicitation\/create differently from the recording/);
    expect(run.stdout).not.toContain('booked');
    expect(run.stderr).toMatch(/1 missed/);
    expect(run.stderr).toMatch(
      /miss: step \d+, MCP tools\/call book .*elicitation\/create differently.*result\.action: "accept" vs "decline"/,
    );
    // --expect tools: the recorded call was not served, so it counts as not made.
    expect(run.stderr).toMatch(/1 of 1 expected recorded call\(s\) never made\n.*step \d+ +MCP book/);
    expect(run.code).not.toBe(0);
  });

  it('the same answer passes', async () => {
    const run = await replay('accepted', 'accept');
    expect(run.stdout).toContain('result: booked Lisbon');
    expect(run.stderr).not.toMatch(/missed|miss:/);
    expect(run.stderr).toContain('expected calls: all 1 made');
    expect(run.code).toBe(0);
  });
});
