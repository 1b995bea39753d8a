// Not a test: prints what the README's A/B walkthrough shows (run with: npx tsx test/experiment/print-walkthrough.mts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.js';
import { openaiChat, startScriptedUpstream } from '../helpers/scripted-upstream.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/ab-agent.mjs');
const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-walk-'));
const llm = await startScriptedUpstream((req) => {
  const body = req.body as { model: string; messages: { role: string; content: string }[] };
  const big = body.model !== 'gpt-4o-mini';
  const tool = body.messages.find((m) => m.role === 'tool');
  if (tool)
    return openaiChat({
      model: body.model,
      content: `It is 21C in Paris (${tool.content.split(':')[0]}).`,
      usage: big ? [60, 12] : [50, 10],
    });
  return openaiChat({
    model: body.model,
    content: null,
    toolCalls: [{ id: 'call_1', name: body.model === 'gpt-4.1' ? 'search' : 'lookup', arguments: '{"city":"Paris"}' }],
    usage: big ? [40, 8] : [30, 6],
  });
});
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
