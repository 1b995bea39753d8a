/**
 * `npm run demo`: the whole loop on one machine, no keys, no network. Starts a scripted LLM upstream, records a
 * small tool-using agent through tapedeck, stops the upstream, replays the same agent from the tape, checks that
 * every answer matches, and diffs the two tapes (identical).
 */
import path from 'node:path';
import { startProxy } from '../front/server.js';
import { diffTapes } from '../inspect/diff/diff.js';
import { loadTape, readTape } from '../tape/tape-reader.js';
import { startScriptedLlm } from './scripted-llm.js';

type Message = {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
};

/** A tiny agent: plain HTTP, as any language would do it. Returns a transcript of what it saw. */
async function agent(baseUrl: string): Promise<string[]> {
  const transcript: string[] = [];
  const call = async (body: Record<string, unknown>): Promise<Response> =>
    fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-demo-not-a-real-key' },
      body: JSON.stringify({ model: 'demo-model', ...body }),
    });

  const messages: Message[] = [{ role: 'user', content: 'What is the weather in Lisbon?' }];
  const first = (await (
    await call({
      messages,
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      ],
    })
  ).json()) as { choices: { message: Message }[] };
  const reply = first.choices[0]!.message;
  const toolCall = reply.tool_calls?.[0];
  transcript.push(`model asks for tool ${toolCall?.function.name}(${toolCall?.function.arguments})`);
  messages.push(reply, { role: 'tool', tool_call_id: toolCall?.id ?? '', content: JSON.stringify({ forecast: 'light rain' }) });

  // The follow-up is streamed: the transcript keeps every chunk as it arrived.
  const streamed = await call({ messages, stream: true, stream_options: { include_usage: true } });
  const text = await streamed.text();
  const parts = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => (JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
    .join('');
  transcript.push(`model answers (streamed): ${parts}`);

  const plain = (await (await call({ messages: [{ role: 'user', content: 'What is six times seven?' }] })).json()) as {
    choices: { message: Message }[];
  };
  transcript.push(`model answers: ${plain.choices[0]!.message.content}`);
  return transcript;
}

async function main(): Promise<number> {
  const dir = path.resolve(process.env.TAPEDECK_DIR ?? 'tapes');
  const say = (line: string): void => void process.stdout.write(`${line}\n`);

  const llm = await startScriptedLlm();
  say(`1. scripted LLM upstream listening on ${llm.url}`);
  const recorder = await startProxy({
    mode: 'record',
    tape: 'demo',
    dir,
    port: 0,
    routes: [{ prefix: '/llm', upstream: llm.url }],
    ifExists: 'overwrite',
  });
  say(`2. tapedeck record on ${recorder.url}, agent base URL ${recorder.url}/llm/v1`);
  const live = await agent(`${recorder.url}/llm`);
  await recorder.close();
  const hitsWhileRecording = llm.hits;
  for (const line of live) say(`   live:   ${line}`);
  const tape = await readTape(recorder.writer.path);
  say(`   recorded ${tape.exchanges.length} exchanges to ${path.relative(process.cwd(), recorder.writer.path)}`);

  await llm.close();
  say('3. upstream stopped');
  const replayer = await startProxy({ mode: 'replay', tape: 'demo', dir, port: 0, routes: [], saveAs: 'demo-replay' });
  say(`4. tapedeck replay on ${replayer.url}`);
  const replayed = await agent(`${replayer.url}/llm`);
  await replayer.close();
  for (const line of replayed) say(`   replay: ${line}`);

  const diff = diffTapes(await loadTape(dir, 'demo'), await loadTape(dir, 'demo-replay'));
  say(
    `5. tapedeck diff demo demo-replay: ${diff.identical ? 'identical' : 'differs'}, score ${diff.score.toFixed(2)}, ` +
      `${diff.toolSequenceDiff.length} tool-sequence edit(s)`,
  );

  const same = JSON.stringify(live) === JSON.stringify(replayed) && diff.identical;
  say('');
  say(
    same
      ? `✓ replay matches the recording: ${live.length} answers identical, served from the tape with the upstream stopped ` +
          `(it had answered ${hitsWhileRecording} requests while recording)`
      : '✗ replay differs from the recording',
  );
  say(`  tapes: ${path.relative(process.cwd(), recorder.writer.path)} and ${path.relative(process.cwd(), replayer.writer.path)}`);
  say('');
  for (const line of nextCommands(dir)) say(line);
  return same ? 0 : 1;
}

/** What to try next: the commands that look at what the demo left, then the examples kit. */
function nextCommands(dir: string): string[] {
  const rel = path.relative(process.cwd(), dir);
  const shown = rel === '' ? '.' : rel.startsWith('..') ? dir : rel;
  const where = dir === path.resolve('tapes') ? '' : ` --dir ${/[\s"'$]/.test(shown) ? JSON.stringify(shown) : shown}`;
  const rows: [string, string][] = [
    [`npx tapedeck show demo${where}`, 'the recorded run, one line per step'],
    [`npx tapedeck show demo --step 0${where}`, 'what the model saw and answered at step 0'],
    [`npx tapedeck diff demo demo-replay${where}`, 'the recording and its replay compared'],
    [`npx tapedeck view demo${where}`, 'the same in a browser'],
    ['node examples/kit.mjs start', 'then the examples kit: README.md, "Try it: the examples kit"'],
  ];
  const width = Math.max(...rows.map(([c]) => c.length));
  return ['next, try:', ...rows.map(([c, what]) => `  ${c.padEnd(width)}   # ${what}`)];
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
