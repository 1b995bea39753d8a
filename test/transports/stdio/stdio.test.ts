import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../../helpers/cli.js';
import { loadTape } from '../../../src/tape/tape-reader.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FS_SERVER = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

let work: string;
let files: string;
let tapes: string;

/** An SDK client talking to `tapedeck mcp-stdio ...` (from this run's transpiled source). */
async function connect(args: string[]): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_MAIN, 'mcp-stdio', ...args],
    cwd: ROOT,
    stderr: 'pipe',
    env: { ...process.env, TAPEDECK_LOG: 'warn' } as Record<string, string>,
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err };
}

const serverCmd = (): string[] => ['--', process.execPath, FS_SERVER, files];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'tapedeck-stdio-'));
  files = path.join(work, 'files');
  tapes = path.join(work, 'tapes');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(files);
  writeFileSync(path.join(files, 'a.txt'), 'alpha\n');
  writeFileSync(path.join(files, 'other.txt'), 'other\n');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('mcp-stdio against the real filesystem server', () => {
  let recorded: { tools: unknown; read: unknown; write: unknown };

  it('records: relays the session and writes every message as an exchange', async () => {
    const { client } = await connect(['--tape', 'fs', '--dir', tapes, '--mode', 'record', ...serverCmd()]);
    const tools = await client.listTools();
    const read = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'a.txt') } });
    const write = await client.callTool({
      name: 'write_file',
      arguments: { path: path.join(files, 'b.txt'), content: 'written while recording' },
    });
    await client.close();
    recorded = { tools, read, write };
    expect(readFileSync(path.join(files, 'b.txt'), 'utf8')).toBe('written while recording');
    rmSync(path.join(files, 'b.txt'));

    const tape = await loadTape(tapes, 'fs');
    expect(tape.problems).toEqual([]);
    const methods = tape.exchanges.map((ex) => ex.mcp?.method);
    expect(methods).toEqual(['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'tools/call']);
    const call = tape.exchanges[4]!;
    expect(call.transport).toBe('stdio');
    expect(call.route).toBe('stdio:@modelcontextprotocol/server-filesystem');
    expect(call.mcp).toMatchObject({ toolName: 'write_file', arguments: { path: path.join(files, 'b.txt') }, transport: 'stdio' });
    expect((tools.tools as { name: string }[]).map((t) => t.name)).toContain('write_file');
  });

  it('replays without the server: identical tool list and results, and a recorded write_file does not touch the disk', async () => {
    // No server command at all: nothing can be started.
    const { client } = await connect(['--tape', 'fs', '--dir', tapes, '--mode', 'replay', '--save-as', 'fs-replay']);
    expect(await client.listTools()).toEqual(recorded.tools);
    expect(await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'a.txt') } })).toEqual(recorded.read);
    expect(
      await client.callTool({ name: 'write_file', arguments: { path: path.join(files, 'b.txt'), content: 'written while recording' } }),
    ).toEqual(recorded.write);
    await client.close();
    expect(existsSync(path.join(files, 'b.txt'))).toBe(false);
    const replay = await loadTape(tapes, 'fs-replay');
    expect(replay.problems).toEqual([]);
    expect(replay.exchanges.filter((ex) => ex.mcp?.method === 'tools/call').map((ex) => ex.match?.kind)).toEqual(['exact', 'exact']);
  });

  it('with --on-miss live: an unrecorded write_file is blocked (isError naming the tool), a read the reviewed file marks safe goes live', async () => {
    const reviewed = path.join(tapes, 'fs-side-effects.yaml');
    writeFileSync(reviewed, 'tools:\n  read_text_file: true\n  write_file: false\ndone: true\n');
    const { client } = await connect([
      '--side-effects',
      reviewed,
      '--tape',
      'fs',
      '--dir',
      tapes,
      '--mode',
      'replay',
      '--on-miss',
      'live',
      '--save-as',
      'fs-live',
      ...serverCmd(),
    ]);
    const blocked = await client.callTool({
      name: 'write_file',
      arguments: { path: path.join(files, 'c.txt'), content: 'must never be written' },
    });
    expect(blocked.isError).toBe(true);
    const text = (blocked.content as { text: string }[])[0]!.text;
    expect(text).toContain('write_file');
    expect(text).toMatch(/side effect/);
    expect(existsSync(path.join(files, 'c.txt'))).toBe(false);

    const live = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'other.txt') } });
    expect(live.isError).not.toBe(true);
    expect((live.content as { text: string }[])[0]!.text).toBe('other\n');
    await client.close();

    const replay = await loadTape(tapes, 'fs-live');
    const calls = replay.exchanges.filter((ex) => ex.mcp?.method === 'tools/call');
    expect(calls.map((ex) => [ex.mcp?.toolName, ex.match?.kind])).toEqual([
      ['write_file', 'blocked'],
      ['read_text_file', 'live'],
    ]);
    expect(existsSync(path.join(files, 'c.txt'))).toBe(false);
  });

  it('strict replay: an unrecorded safe call gets a JSON-RPC error explaining the miss', async () => {
    const { client } = await connect(['--tape', 'fs', '--dir', tapes, '--mode', 'replay', '--save-as', 'fs-strict']);
    await expect(client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'other.txt') } })).rejects.toThrow(
      /no recording on tape "fs" matches tools\/call "read_text_file"/,
    );
    await client.close();
  });
}, 60_000);
