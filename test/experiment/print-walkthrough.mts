// Not a test: prints what the README's A/B walkthrough shows (run with: npx tsx test/experiment/print-walkthrough.mts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.js';
import { startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { abModelAnswer } from './fixtures/ab-upstream.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/ab-agent.mjs');
const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-walk-'));
const llm = await startScriptedUpstream(abModelAnswer);
try {
  await runCli(['record', '--tape', 'weather', '--dir', dir, '--route', `/openai=${llm.url}`, '--', process.execPath, AGENT]);
  const r = await runCli([
    'experiment',
    '--tape',
    'weather',
    '--dir',
    dir,
    '--model',
    'gpt-4.1',
    '--model',
    'gpt-4.1-mini',
    '--repeat',
    '2',
    '--',
    process.execPath,
    AGENT,
  ]);
  process.stdout.write(r.stdout);
  const c = await runCli(['cost', 'weather', '--dir', dir, '--as', 'gpt-4.1', '--as', 'claude-haiku-4-5']);
  process.stdout.write(c.stdout);
} finally {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
}
