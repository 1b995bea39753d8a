/**
 * `--faults` / `--fault` and `--expect` from the command line, in wrapper mode with the official SDKs: a fault reaches
 * the agent as its SDK reads a real API error and lands on the replay tape; a run that skips recorded calls fails its
 * contract (exit 1, the calls named in diff's words) even though the agent exited 0.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { runToEnd } from '../helpers/cli.js';
import { anthropicMessage, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/agents/sdk-agent.mjs');

let dir: string;
let upstream: ScriptedUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-faults-cli-'));
  upstream = await startScriptedUpstream((req) =>
    req.url.includes('/messages') ? anthropicMessage({ text: 'a short summary' }) : openaiChat({ content: 'a three-day plan' }),
  );
  const routes = ['--route', `/openai=${upstream.url}`, '--route', `/anthropic=${upstream.url}`];
  const rec = await runToEnd(['record', 'agent', '--dir', dir, ...routes, '--', process.execPath, AGENT]);
  if (rec.code !== 0) throw new Error(`record failed: ${rec.stderr}`);
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('faults and contracts on the command line', () => {
  it('--fault: the Anthropic call gets a 529 overload its SDK reports; the replay tape has it as an injected fault', async () => {
    const rep = await runToEnd([
      'replay',
      'agent',
      '--dir',
      dir,
      '--save-as',
      'agent-529',
      '--fault',
      '{when: {api: anthropic}, then: {status: 529}}',
      '--',
      process.execPath,
      AGENT,
    ]);
    expect(rep.stderr).toContain('tapedeck: this run: fault #1 anthropic -> 529');
    expect(rep.code).not.toBe(0);
    expect(rep.stderr).toMatch(/529/);
    const out = await readTape(path.join(dir, 'agent-529.jsonl'));
    expect(out.exchanges.map((ex) => ex.match?.kind)).toEqual(['exact', 'fault']);
    expect(out.exchanges[1]?.llm?.errorType).toBe('overloaded_error');
  });

  it('--faults FILE and --seed; a bad rule is one line, exit 2', async () => {
    const file = path.join(dir, 'faults.yaml');
    writeFileSync(file, 'faults:\n  - when: { api: openai, probability: 1 }\n    then: { status: 500, message: boom }\n');
    const rep = await runToEnd([
      'replay',
      'agent',
      '--dir',
      dir,
      '--save-as',
      'agent-500',
      '--faults',
      file,
      '--seed',
      '3',
      '--',
      process.execPath,
      AGENT,
    ]);
    expect(rep.code).not.toBe(0);
    expect(rep.stderr).toContain('boom');
    const bad = await runToEnd(['replay', 'agent', '--dir', dir, '--fault', '{then: {status: 429}, when: {api: openai, cal: 2}}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/bad --fault .*Unrecognized key.*"cal"/);
    const seedless = await runToEnd(['replay', 'agent', '--dir', dir, '--seed', '1']);
    expect(seedless.code).toBe(2);
    expect(seedless.stderr).toContain('--seed goes with --faults or --fault');
  });

  it('--expect llm: an agent that makes none of the recorded calls fails its contract, though it exited 0', async () => {
    const skip = await runToEnd([
      'replay',
      'agent',
      '--dir',
      dir,
      '--save-as',
      'agent-skip',
      '--expect',
      'llm',
      '--',
      process.execPath,
      '-e',
      'process.exit(0)',
    ]);
    expect(skip.code).toBe(1);
    expect(skip.stderr).toContain('tapedeck: unused recordings  2 of 2 expected recorded call(s) never made');
    expect(skip.stderr).toMatch(/tapedeck: {3}step 0 {2}LLM gpt-4o-mini {2}plan the trip/);
    expect(skip.stderr).toMatch(/tapedeck: {3}step 1 {2}LLM claude-sonnet-4-6 {2}summarise the plan/);

    const all = await runToEnd([
      'replay',
      'agent',
      '--dir',
      dir,
      '--save-as',
      'agent-all',
      '--expect',
      'llm',
      '--',
      process.execPath,
      AGENT,
    ]);
    expect(all.code).toBe(0);
    expect(all.stderr).toContain('tapedeck: expected calls: all 2 made');
  });

  it('--expect with a name the recording never called (a typo) is refused before the run: one line, exit 2, did-you-mean', async () => {
    const typo = await runToEnd(['replay', 'agent', '--dir', dir, '--expect', 'al', '--', process.execPath, '-e', 'process.exit(0)']);
    expect(typo.code).toBe(2);
    expect(typo.stderr.trim().split('\n')).toHaveLength(1);
    expect(typo.stderr).toBe(
      'tapedeck replay: --expect names "al", which the recording "agent" never called: did you mean all? (--expect takes all, ' +
        'llm, tools, or tool and model names; it called claude-sonnet-4-6, gpt-4o-mini)\n',
    );
    const model = await runToEnd(['replay', 'agent', '--dir', dir, '--expect', 'llm,gpt-4o-mni']);
    expect(model.code).toBe(2);
    expect(model.stderr).toContain('never called: did you mean gpt-4o-mini?');
  });

  it('a --fault value that is not YAML shows where it stopped (a caret under the column) and an example, exit 2', async () => {
    const bad = await runToEnd(['replay', 'agent', '--dir', dir, '--fault', '{when: {api: openai call: 2}, then: {status: 429}}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      [
        'tapedeck replay: --fault is not valid YAML: Block collections are not allowed within flow collections at line 1, column 14 ' +
          '(a comma missing between two entries?)',
        '  {when: {api: openai call: 2}, then: {status: 429}}',
        '               ^^^^^^^^^^^^^^',
        "  a rule is one YAML flow mapping, e.g. --fault '{when: {api: openai, call: 2}, then: {status: 429}}'",
        '',
      ].join('\n'),
    );
    const unclosed = await runToEnd(['replay', 'agent', '--dir', dir, '--fault', '{when: {api: openai, call: 2}, then: {status: 429}']);
    expect(unclosed.code).toBe(2);
    expect(unclosed.stderr.split('\n').slice(0, 3)).toEqual([
      'tapedeck replay: --fault is not valid YAML: Flow map must end with a } at line 1, column 51',
      '  {when: {api: openai, call: 2}, then: {status: 429}',
      `  ${' '.repeat(50)}^`,
    ]);
  });
});
