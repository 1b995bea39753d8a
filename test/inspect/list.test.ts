import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommand } from '../../src/cli/list.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { recordAgentTapes } from './record-agent.js';
import { runCommand } from '../helpers/run-command.js';
import { runCli } from '../helpers/cli.js';

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-list-'));
  await recordAgentTapes(dir);
  // A tape with a corrupt line, and a file that is no tape at all: both reported, neither fatal.
  writeFileSync(path.join(dir, 'zz-not-a-tape.jsonl'), 'garbage\n');
}, 30_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck list on tapes recorded through the proxy', () => {
  it('--json gives every tape with its totals, and how the replay tape was served', async () => {
    const { code, stdout } = await runCommand(listCommand, ['--dir', dir, '--json']);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as Record<string, unknown>[];
    expect(rows.map((r) => r.name)).toEqual(['agent', 'agent-replay', 'zz-not-a-tape']);
    const header = (await readTape(path.join(dir, 'agent.jsonl'))).header;
    const agent = rows[0]!;
    expect(agent.createdAt).toBe(header.createdAt);
    expect(agent.mode).toBe('record');
    expect(agent.exchanges).toBe(6);
    expect(agent.llmCalls).toBe(6);
    expect(agent.toolCalls).toBe(3); // get_weather, lookup_city, get_time
    expect(agent.tokens).toEqual({ input: 200, output: 51, total: 251 });
    expect(agent.errors).toBe(1);
    // gpt-4o-mini: 100 in, 19 out; claude-sonnet-4-6: 100 in, 32 out (config/prices.yaml); the failed call has no usage.
    expect(agent.cost).toBeCloseTo((100 * 0.15 + 19 * 0.6 + 100 * 3 + 32 * 15) / 1e6, 12);
    expect(agent.costedCalls).toBe(5);
    expect(agent.durationMs).toBeGreaterThan(0);
    expect(agent.replayOf).toBeUndefined();
    expect(agent.problems).toEqual([]);

    const replay = rows[1]!;
    expect(replay.mode).toBe('replay');
    expect(replay.exchanges).toBe(2);
    expect(replay.replayOf).toEqual({ tape: 'agent', onMiss: 'strict' });
    expect(replay.matches).toEqual({ exact: 1, semantic: 0, live: 0, blocked: 0, miss: 1, mock: 0, fault: 0 });

    expect(rows[2]).toEqual({ name: 'zz-not-a-tape', error: expect.stringContaining('no header line') as unknown });
  });

  it('prints the key facts for people, without colour when not a TTY', async () => {
    appendFileSync(path.join(dir, 'agent.jsonl'), '{"type":"exchange", torn\n');
    const { code, stdout } = await runCommand(listCommand, ['--dir', dir]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^agent {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/m);
    expect(stdout).toContain('6 exchanges · 6 LLM · 3 tool · 251 tok');
    expect(stdout).toContain('1 error(s)');
    expect(stdout).toContain('replay of agent (on-miss strict): exact 1 · semantic 0 · live 0 · blocked 0 · miss 1');
    expect(stdout).toMatch(/! line 8: not valid JSON; skipped/);
    expect(stdout).toMatch(/! zz-not-a-tape: unreadable/);
    expect(stdout).not.toContain('\u001b[');
    for (const line of stdout.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('works through the real CLI process: JSON on stdout, no colour on a pipe, a missing tape is one line and exit 1', async () => {
    const list = await runCli(['list', '--dir', dir, '--json']);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { name: string }[]).map((r) => r.name)).toContain('agent-replay');
    const show = await runCli(['show', 'agent-replay', '--dir', dir, '--step=-1']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^step 1 of 2/);
    expect(show.stdout).not.toContain('\u001b[');
    const missing = await runCli(['show', 'nope', '--dir', dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toMatch(/^tapedeck show: no tape "nope" in .*\(tapedeck list shows them\)$/);
  }, 30_000);
});
