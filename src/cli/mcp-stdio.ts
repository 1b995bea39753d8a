import { TapedeckError } from '../errors.js';
import { createLogger } from '../log.js';
import { createLiveStdioServer } from '../transports/stdio/live.js';
import { recordStdio } from '../transports/stdio/record.js';
import { replayStdio } from '../transports/stdio/replay.js';
import { defaultServerName } from '../transports/stdio/exchange.js';
import { createReplayMatcher } from '../replay/pipeline.js';
import { loadSideEffects, policyForTape } from '../replay/side-effects.js';
import { openTapeSession } from '../engine/tape-session.js';
import { sideEffectNotes } from './shared/side-effect-notes.js';
import { validateTapeName } from '../tape/paths.js';
import type { LoadedTape } from '../tape/store.js';
import { stringValue, type Command } from './shared/command.js';
import { keyOptions, matchingOptions } from './shared/serve-options.js';
import { parseOnMiss } from './replay.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';
import { notice } from './shared/notice.js';
import { requiredTape, TAPE_OPTION } from './shared/tape-arg.js';
import { FAULT_OPTIONS, faultPlanFrom } from './shared/fault-options.js';

export const mcpStdioCommand: Command = {
  name: 'mcp-stdio',
  summary: "record or replay an MCP server that speaks stdio (put this in the agent's MCP config instead of the server)",
  usage: [
    'tapedeck mcp-stdio NAME --mode record|replay [--dir DIR | --store URL] [--name NAME] [--side-effects FILE]',
    '                   [--on-miss strict|lenient|live] [--save-as NAME] [--overwrite | --append] [--max-line-mb N]',
    '                   [--faults FILE] [--fault RULE]... [--seed N] [--verbose] -- COMMAND ARGS...',
    '',
    '  NAME              the tape (to record: a name; to replay: a name, a prefix, latest or a path to a .jsonl);',
    '                    --tape NAME says the same',
    '  --mode record     start COMMAND, relay stdin/stdout byte for byte (stderr passes through), record every message',
    '  --mode replay     answer from the tape; COMMAND is not started unless --on-miss live needs it for a safe tool',
    '  --name NAME       server name on the tape (default: derived from COMMAND, e.g. stdio:@scope/server)',
    '  --side-effects F  reviewed side-effects file (done: true); without it a tool is a side effect unless the',
    '                    tape recorded it as readOnlyHint: true. Unrecorded side-effect calls are always blocked.',
    '  --on-miss MODE    strict (default): a JSON-RPC error; lenient: tool misses become isError results;',
    '                    live: forward safe requests to the real server (started on first need)',
    '  --save-as NAME    replay tape name (default NAME.replay-TIMESTAMP)',
    "  --max-line-mb N   the longest JSON-RPC line read, in MB (default 10, the MCP SDK's): replay answers a longer",
    '                    line with a -32700 error, record relays it unrecorded; one line on stderr either way',
    '  --overwrite/--append  when recording to a tape that exists',
    '  --faults FILE     inject faults in replay: a YAML file of rules; a rule whose then is toolError or rpcError',
    '                    answers the MCP requests it picks with it (see tapedeck replay --help for the rule shape)',
    "  --fault RULE      one rule inline: '{when: {tool: refund_order}, then: {toolError: card declined}}'",
    '  --seed N          the seed of rules with a probability',
    '  --verbose         structured logs on stderr',
    "stdout carries JSON-RPC only; tapedeck's own messages go to stderr.",
    STORE_USAGE,
  ].join('\n'),
  options: {
    ...TAPE_OPTION,
    ...STORE_OPTIONS,
    mode: { type: 'string' },
    name: { type: 'string' },
    'side-effects': { type: 'string' },
    'on-miss': { type: 'string' },
    'save-as': { type: 'string' },
    'max-line-mb': { type: 'string' },
    overwrite: { type: 'boolean' },
    append: { type: 'boolean' },
    verbose: { type: 'boolean' },
    ...FAULT_OPTIONS,
  },
  allowPositionals: true,
  async run(ctx) {
    const tape = requiredTape(ctx, 'tapedeck mcp-stdio NAME --mode record|replay [flags] -- COMMAND ARGS...');
    const faults = faultPlanFrom(ctx.values);
    const mode = stringValue(ctx.values, 'mode');
    if (mode !== 'record' && mode !== 'replay')
      throw new TapedeckError('BAD_ARGS', `--mode must be record or replay (got ${mode === undefined ? 'nothing' : `"${mode}"`})`);
    const [command, ...args] = ctx.rest;
    // A stdio recording relays the server's lines as they are: no rule could act there, so none is announced and ignored.
    if (faults !== undefined && mode === 'record')
      throw new TapedeckError(
        'BAD_ARGS',
        '--fault and --faults act in replay only for a stdio MCP server (record it, then replay it with the rule); over HTTP, record applies them',
      );
    if (command === undefined && mode === 'record')
      throw new TapedeckError(
        'BAD_ARGS',
        'give the server command after --, e.g. tapedeck mcp-stdio t --mode record -- npx -y @modelcontextprotocol/server-filesystem /tmp',
      );
    const onMiss = parseOnMiss(stringValue(ctx.values, 'on-miss'));
    const maxLineBytes = parseMaxLine(stringValue(ctx.values, 'max-line-mb'));
    if (onMiss === 'live' && command === undefined) throw new TapedeckError('BAD_ARGS', '--on-miss live needs the server command after --');
    const config = commandConfig(ctx);
    // stdout is the JSON-RPC channel: every log line goes to stderr.
    const log = createLogger(ctx.values.verbose === true ? 'debug' : (ctx.env.TAPEDECK_LOG ?? 'warn'));
    const sideEffectsFile = stringValue(ctx.values, 'side-effects');
    const file = sideEffectsFile === undefined ? undefined : loadSideEffects(sideEffectsFile);

    return withStore(config, async (store) => {
      if (mode === 'record') {
        validateTapeName(tape);
        if (ctx.values.overwrite === true && ctx.values.append === true)
          throw new TapedeckError('BAD_ARGS', '--overwrite and --append exclude each other');
        const name = stringValue(ctx.values, 'name') ?? defaultServerName(command as string, args);
        const { writer } = await openTapeSession({
          mode: 'record',
          store,
          tape,
          ifExists: ctx.values.overwrite === true ? 'overwrite' : ctx.values.append === true ? 'append' : 'fail',
          redact: config.redact,
          keyOptions: keyOptions(config),
          routes: [],
        });
        notice(ctx, `recording stdio server ${name} to ${writer.path}`);
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
          onTapeFailure: config.whenTapeFails,
          ...maxLineBytes,
        });
        await writer.close();
        // The server is gone: stop reading the client so the process can exit and the client sees stdout close.
        process.stdin.destroy();
        return code;
      }

      // The tape to replay may be a name, `latest`, a unique prefix or a path to a .jsonl.
      const ref = await store.resolve(tape);
      const saveAs = stringValue(ctx.values, 'save-as');
      if (saveAs !== undefined) validateTapeName(saveAs);
      if (saveAs === ref.name) throw new TapedeckError('BAD_ARGS', '--save-as must name a different tape than the one replayed');
      const session = await openTapeSession({
        mode: 'replay',
        store: ref.store,
        tape: ref.name,
        saveAs,
        redact: config.redact,
        keyOptions: keyOptions(config),
        routes: [],
        replayOf: { onMiss },
      });
      const out = session.writer;
      const loaded = session.source as LoadedTape;
      try {
        for (const p of loaded.problems) notice(ctx, `${ref.name} line ${p.line}: ${p.message}`, 'warn');
        const name = stdioServerName(loaded, stringValue(ctx.values, 'name'), command, args);
        notice(ctx, `replaying stdio server ${name} from "${ref.name}" (on-miss ${onMiss}); saving this run as "${out.name}"`);
        notice(
          ctx,
          sideEffectNotes(loaded.exchanges, {
            tape: ref.name,
            onMiss,
            ...(file && sideEffectsFile !== undefined ? { file: { path: sideEffectsFile, data: file } } : {}),
          }),
          'warn',
        );
        return await replayStdio({
          tape: loaded,
          name,
          matcher: (served) => createReplayMatcher(served, { ...matchingOptions(config), semantic: config.match.semantic }),
          policy: policyForTape(loaded.exchanges, file),
          onMiss,
          ...(faults ? { faults: faults.plan } : {}),
          onTapeFailure: config.whenTapeFails,
          out,
          stdin: process.stdin,
          stdout: ctx.stdout,
          stderr: ctx.stderr,
          log,
          ...maxLineBytes,
          ...(command !== undefined
            ? { live: (initialize) => createLiveStdioServer({ command, args, initialize, log, env: ctx.env, ...maxLineBytes }) }
            : {}),
        });
      } finally {
        await out.close();
      }
    });
  },
};

/** `--max-line-mb N` as the options' `maxLineBytes` (nothing when not given: the 10 MB default). */
function parseMaxLine(text: string | undefined): { maxLineBytes?: number } {
  if (text === undefined) return {};
  const mb = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || mb <= 0 || mb > 1024)
    throw new TapedeckError('BAD_ARGS', `--max-line-mb must be a number of MB above 0, at most 1024 (got "${text}")`);
  return { maxLineBytes: Math.round(mb * 1024 * 1024) };
}

/** The stdio server of the tape to replay: the one named (by --name or the command), or the tape's only one. */
function stdioServerName(loaded: LoadedTape, given: string | undefined, command: string | undefined, args: string[]): string {
  const stdioRoutes = [...new Set(loaded.exchanges.filter((ex) => ex.transport === 'stdio').map((ex) => ex.route))];
  const name = given ?? (command !== undefined ? defaultServerName(command, args) : undefined);
  if (name !== undefined && stdioRoutes.includes(name)) return name;
  // A tape with a single stdio server needs no name: the server's install path may have moved since recording.
  if (stdioRoutes.length === 1 && given === undefined) return stdioRoutes[0] as string;
  throw new TapedeckError(
    'BAD_ARGS',
    `tape "${loaded.name}" has no stdio server ${name ?? '(no --name given)'}; it has: ${stdioRoutes.join(', ') || 'none'} (pick one with --name)`,
  );
}
