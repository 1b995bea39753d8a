import { loadConfig } from '../config/config.js';
import { TapedeckError } from '../errors.js';
import { createLogger } from '../log.js';
import { createLiveStdioServer } from '../proxy/stdio/live.js';
import { recordStdio } from '../proxy/stdio/record.js';
import { replayStdio } from '../proxy/stdio/replay.js';
import { defaultServerName } from '../proxy/stdio/exchange.js';
import { createReplayMatcher } from '../replay/pipeline.js';
import { loadSideEffects, policyForTape } from '../replay/side-effects.js';
import { sideEffectNotes } from './side-effect-notes.js';
import { loadTape } from '../tape/tape-reader.js';
import { createTapeWriter } from '../tape/tape-writer.js';
import { validateTapeName } from '../tape/paths.js';
import { stringValue, type Command } from './command.js';
import { matchingOptions } from './serve-options.js';
import { parseOnMiss } from './replay.js';

export const mcpStdioCommand: Command = {
  name: 'mcp-stdio',
  summary: "record or replay an MCP server that speaks stdio (put this in the agent's MCP config instead of the server)",
  usage: [
    'tapedeck mcp-stdio --tape NAME [--dir DIR] --mode record|replay [--name NAME] [--side-effects FILE]',
    '                   [--on-miss strict|lenient|live] [--save-as NAME] [--overwrite | --append] -- COMMAND ARGS...',
    '',
    '  --mode record     start COMMAND, relay stdin/stdout byte for byte (stderr passes through), record every message',
    '  --mode replay     answer from the tape; COMMAND is not started unless --on-miss live needs it for a safe tool',
    '  --name NAME       server name on the tape (default: derived from COMMAND, e.g. stdio:@scope/server)',
    '  --side-effects F  reviewed side-effects file (done: true); without it a tool is a side effect unless the',
    '                    tape recorded it as readOnlyHint: true. Unrecorded side-effect calls are always blocked.',
    '  --on-miss MODE    strict (default): a JSON-RPC error; lenient: tool misses become isError results;',
    '                    live: forward safe requests to the real server (started on first need)',
    '  --save-as NAME    replay tape name (default NAME.replay-TIMESTAMP)',
    '  --overwrite/--append  when recording to a tape that exists',
    "stdout carries JSON-RPC only; tapedeck's own messages go to stderr.",
  ].join('\n'),
  options: {
    tape: { type: 'string', short: 't' },
    dir: { type: 'string' },
    config: { type: 'string' },
    mode: { type: 'string' },
    name: { type: 'string' },
    'side-effects': { type: 'string' },
    'on-miss': { type: 'string' },
    'save-as': { type: 'string' },
    overwrite: { type: 'boolean' },
    append: { type: 'boolean' },
    verbose: { type: 'boolean' },
  },
  async run(ctx) {
    const tape = stringValue(ctx.values, 'tape');
    if (tape === undefined) throw new TapedeckError('BAD_ARGS', '--tape NAME is required');
    validateTapeName(tape);
    const mode = stringValue(ctx.values, 'mode');
    if (mode !== 'record' && mode !== 'replay')
      throw new TapedeckError('BAD_ARGS', `--mode must be record or replay (got ${mode === undefined ? 'nothing' : `"${mode}"`})`);
    const [command, ...args] = ctx.rest;
    if (command === undefined && mode === 'record')
      throw new TapedeckError(
        'BAD_ARGS',
        'give the server command after --, e.g. tapedeck mcp-stdio --tape t --mode record -- npx -y @modelcontextprotocol/server-filesystem /tmp',
      );
    const onMiss = parseOnMiss(stringValue(ctx.values, 'on-miss'));
    if (onMiss === 'live' && command === undefined) throw new TapedeckError('BAD_ARGS', '--on-miss live needs the server command after --');
    const config = loadConfig(stringValue(ctx.values, 'config'), { dir: stringValue(ctx.values, 'dir') }, ctx.env);
    // stdout is the JSON-RPC channel: every log line goes to stderr.
    const log = createLogger(ctx.values.verbose === true ? 'debug' : (ctx.env.TAPEDECK_LOG ?? 'warn'));
    const sideEffectsFile = stringValue(ctx.values, 'side-effects');
    const file = sideEffectsFile === undefined ? undefined : loadSideEffects(sideEffectsFile);

    if (mode === 'record') {
      if (ctx.values.overwrite === true && ctx.values.append === true)
        throw new TapedeckError('BAD_ARGS', '--overwrite and --append exclude each other');
      const name = stringValue(ctx.values, 'name') ?? defaultServerName(command as string, args);
      const writer = await createTapeWriter({
        dir: config.dir,
        name: tape,
        ifExists: ctx.values.overwrite === true ? 'overwrite' : ctx.values.append === true ? 'append' : 'fail',
        redact: config.redact,
        header: { mode: 'record', routes: [] },
      });
      ctx.stderr.write(`tapedeck: recording stdio server ${name} to ${writer.path}\n`);
      const code = await recordStdio({
        command: command as string,
        args,
        name,
        writer,
        stdin: process.stdin,
        stdout: ctx.stdout,
        stderr: ctx.stderr,
        log,
        env: ctx.env,
      });
      await writer.close();
      // The server is gone: stop reading the client so the process can exit and the client sees stdout close.
      process.stdin.destroy();
      return code;
    }

    const loaded = await loadTape(config.dir, tape);
    for (const p of loaded.problems) ctx.stderr.write(`tapedeck: ${tape} line ${p.line}: ${p.message}\n`);
    const stdioRoutes = [...new Set(loaded.exchanges.filter((ex) => ex.transport === 'stdio').map((ex) => ex.route))];
    let name = stringValue(ctx.values, 'name') ?? (command !== undefined ? defaultServerName(command, args) : undefined);
    if (name === undefined || !stdioRoutes.includes(name)) {
      // A tape with a single stdio server needs no name: the server's install path may have moved since recording.
      if (stdioRoutes.length === 1 && stringValue(ctx.values, 'name') === undefined) name = stdioRoutes[0] as string;
      else
        throw new TapedeckError(
          'BAD_ARGS',
          `tape "${tape}" has no stdio server ${name ?? '(no --name given)'}; it has: ${stdioRoutes.join(', ') || 'none'} (pick one with --name)`,
        );
    }
    const saveAs = stringValue(ctx.values, 'save-as') ?? `${tape}.replay-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    validateTapeName(saveAs);
    if (saveAs === tape) throw new TapedeckError('BAD_ARGS', '--save-as must name a different tape than --tape');
    const out = await createTapeWriter({
      dir: config.dir,
      name: saveAs,
      ifExists: 'overwrite',
      redact: config.redact,
      header: { mode: 'replay', routes: [], replayOf: { tape, onMiss } },
    });
    ctx.stderr.write(`tapedeck: replaying stdio server ${name} from "${tape}" (on-miss ${onMiss}); saving this run as "${saveAs}"\n`);
    for (const line of sideEffectNotes(loaded.exchanges, {
      tape,
      onMiss,
      ...(file && sideEffectsFile !== undefined ? { file: { path: sideEffectsFile, data: file } } : {}),
    }))
      ctx.stderr.write(`tapedeck: ${line}\n`);
    const code = await replayStdio({
      tape: loaded,
      name,
      matcher: createReplayMatcher(loaded.exchanges, {
        ...matchingOptions(config),
        semantic: config.match.semantic,
      }),
      policy: policyForTape(loaded.exchanges, file),
      onMiss,
      out,
      stdin: process.stdin,
      stdout: ctx.stdout,
      log,
      ...(command !== undefined ? { live: (initialize) => createLiveStdioServer({ command, args, initialize, log, env: ctx.env }) } : {}),
    });
    await out.close();
    return code;
  },
};
