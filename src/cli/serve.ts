import { TapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import { createMcpResponder } from '../transports/mcp/responder.js';
import { createOAuthResponder } from '../transports/oauth/responder.js';
import { createTestPattern } from '../serve/test-pattern.js';
import { startServe, type PrunedOrphans, type RunningServe, type ServeMode, type TapeReport } from '../serve/serve.js';
import { createReplayMatcher } from '../replay/pipeline.js';
import { allowLiveFor, createSideEffectPolicy, loadSideEffects } from '../replay/side-effects.js';
import { expectJudge, expectKindNear, parseExpect } from '../inspect/expected-calls.js';
import { parseAge } from '../tape/stores/housekeeping.js';
import { validateTapeName } from '../tape/paths.js';
import { stringList, stringValue, type Command, type CommandContext } from './shared/command.js';
import { FAULT_OPTIONS, FAULT_USAGE, faultPlansFrom } from './shared/fault-options.js';
import { parseOnMiss, parseThreshold, parseTiming } from './replay.js';
import { matchingOptions, proxyBase, serveSettings, SERVE_OPTIONS } from './shared/serve-options.js';
import { withStore } from './shared/store-options.js';
import { untilStopped } from './shared/until-stopped.js';
import { noticeLines, warning, type Said } from './shared/notice.js';

const MODES: readonly ServeMode[] = ['auto', 'record', 'replay', 'refresh'];

export const serveCommand: Command = {
  name: 'serve',
  summary: 'one proxy for a whole test suite: a tape per test, chosen per request (/@NAME/... or x-tapedeck-tape)',
  usage: [
    'tapedeck serve [--mode auto|record|replay|refresh] [--dir DIR | --store URL] [--namespace NS] [--port N] [--host H]',
    '               [--route PREFIX=URL]... [--tape DEFAULT] [--on-miss strict|lenient|live] [--timing T] [--side-effects FILE]',
    '               [--threshold S | --exact-only] [--no-match-headers] [--save-replays] [--json] [--config FILE]',
    '               [--allow-host NAME]... [--verbose] [--connect-timeout S] [--response-timeout S] [--idle-timeout S]',
    '               [--shutdown-timeout S] [--faults FILE] [--fault RULE]... [--seed N] [--expect KINDS]',
    '               [--rerecord GLOB]... [--max-age AGE] [--orphans] [--prune-orphans]',
    '',
    "  The tape of a request: its path's first segment @NAME (base URL http://127.0.0.1:8787/@NAME/openai/v1 is the",
    '  tape NAME, route /openai; %2F in NAME for a sub-folder), else the header x-tapedeck-tape: NAME (forward-proxy',
    '  clients), else --tape. A request that names none is answered 400 (tapedeck_no_tape). The tape of a test:',
    '  GET /@?file=FILE&name=SUITE&name=TEST answers {"tape": NAME} (what the vitest and pytest helpers ask).',
    '  --mode M            auto (default): replay a tape that exists, record one that does not; record: record every',
    '                      tape (one that exists is an error, 409); replay: replay every tape (a missing one is an',
    '                      error, 404); refresh: record every tape afresh, replacing what it held',
    '  --tape DEFAULT      the tape of requests that name none',
    "  --save-replays      keep each replayed tape's replay tape (NAME.replay-TIMESTAMP) beside it (default: not kept)",
    '  --json              on stop, print what each tape did as one JSON line on stdout',
    ...FAULT_USAGE,
    "                      (a plan per test's tape: call N counts within the test; --seed mixes in the tape's name)",
    "  --expect KINDS      when a test's tape is closed (its test over, or serve stopping), every recorded call of these",
    '                      kinds it never made fails it: all, llm, tools, or tool and model names (comma-separated);',
    '                      listed per tape, in the answer to DELETE /@NAME, and exit 1',
    '  --rerecord GLOB     the tests it matches record their tape afresh (replacing it), whatever the mode; the others',
    "                      replay (repeatable; * any characters, ? one, {a,b} either; over a test's full name",
    '                      "file > suite > test", its node id "file::Class::test", or its tape name)',
    '  --max-age AGE       a tape recorded longer ago (30d, 12h) is recorded afresh in auto mode, refused in replay mode',
    '                      (409 tapedeck_tape_too_old, one line saying how old it is and how to refresh it)',
    '  --orphans           on stop, list the recordings in the folder (or namespace) no test opened or was given',
    "  --prune-orphans     on stop, delete them: only for a serve that served a whole suite's run",
    '  (--on-miss, --timing, --side-effects, --threshold, --exact-only, --no-match-headers as for replay;',
    '   --dir, --store, --namespace, --port, --host, --route, --config, --allow-host, --verbose, --connect-timeout,',
    '   --response-timeout, --idle-timeout, --shutdown-timeout as for record)',
    '',
    'Each tape has one writer, opened on its first request and closed when serve stops (SIGINT / SIGTERM); then',
    'a line per tape says what it did (recorded; replayed, by similarity; missed, blocked, the first miss; faults',
    "injected). Exit 1 when a tape could not be written, or a test's tape missed expected calls (--expect).",
  ].join('\n'),
  // Every flag record and replay share but --sandbox: serve runs no command to put in one.
  options: {
    ...Object.fromEntries(Object.entries(SERVE_OPTIONS).filter(([name]) => name !== 'sandbox')),
    mode: { type: 'string' },
    'on-miss': { type: 'string' },
    timing: { type: 'string' },
    'side-effects': { type: 'string' },
    'exact-only': { type: 'boolean' },
    'no-match-headers': { type: 'boolean' },
    threshold: { type: 'string' },
    'save-replays': { type: 'boolean' },
    json: { type: 'boolean' },
    ...FAULT_OPTIONS,
    expect: { type: 'string' },
    rerecord: { type: 'string', multiple: true },
    'max-age': { type: 'string' },
    orphans: { type: 'boolean' },
    'prune-orphans': { type: 'boolean' },
  },
  async run(ctx) {
    const givenTape = stringValue(ctx.values, 'tape');
    // As the store names it (`--tape t.jsonl` is the tape t), so the report does too.
    const defaultTape = givenTape === undefined ? undefined : validateTapeName(givenTape);
    if (ctx.rest.length > 0)
      throw new TapedeckError('BAD_ARGS', 'serve runs no command: start it, point the tests at it (TAPEDECK_URL), stop it');
    // serve's --tape is optional (a default); the shared settings want one.
    const settings = serveSettings(
      { ...ctx, values: { ...ctx.values, tape: defaultTape ?? 'serve' } },
      { usage: 'tapedeck serve [flags]', tapeRef: true },
    );
    const { config, log } = settings;
    const modeText = stringValue(ctx.values, 'mode') ?? 'auto';
    const mode = MODES.find((m) => m === modeText);
    if (mode === undefined) throw new TapedeckError('BAD_ARGS', `--mode must be auto, record, replay or refresh (got "${modeText}")`);
    const onMiss = parseOnMiss(stringValue(ctx.values, 'on-miss'));
    const timing = parseTiming(stringValue(ctx.values, 'timing'));
    const threshold = parseThreshold(stringValue(ctx.values, 'threshold'));
    const exactOnly = ctx.values['exact-only'] === true;
    const sideEffectsFile = stringValue(ctx.values, 'side-effects');
    const sideEffects = sideEffectsFile === undefined ? undefined : loadSideEffects(sideEffectsFile);
    const faults = faultPlansFrom(ctx.values);
    const expectText = stringValue(ctx.values, 'expect');
    const expect = expectText === undefined ? undefined : parseExpect(expectText);
    const rerecord = stringList(ctx.values, 'rerecord');
    createTestPattern(rerecord); // a pattern that does not parse is refused now, before anything listens
    const maxAgeText = stringValue(ctx.values, 'max-age');
    const maxAge = maxAgeText === undefined ? undefined : { ms: asFlag('max-age', () => parseAge(maxAgeText)), text: maxAgeText.trim() };
    const orphans =
      ctx.values.orphans === true || ctx.values['prune-orphans'] === true ? { prune: ctx.values['prune-orphans'] === true } : undefined;
    return withStore(config, async (store) => {
      const base = proxyBase(settings, store);
      const server = await startServe({
        mode,
        store,
        host: base.host,
        port: base.port,
        allowHosts: base.allowHosts,
        forwardProxy: base.forwardProxy,
        timeouts: base.timeouts,
        log,
        ...(defaultTape !== undefined ? { defaultTape } : {}),
        saveReplays: ctx.values['save-replays'] === true,
        record: {
          routes: base.routes,
          redact: base.redact,
          keyOptions: base.keyOptions,
          onTapeFailure: base.onTapeFailure,
          whenTapeFails: config.whenTapeFails,
        },
        replay: {
          // As for replay: routes chosen now win over each tape's, which win over the built-in defaults.
          routes: settings.routeSources.chosen,
          fallbackRoutes: settings.routeSources.defaults,
          redact: base.redact,
          keyOptions: base.keyOptions,
          onTapeFailure: base.onTapeFailure,
          whenTapeFails: config.whenTapeFails,
          onMiss,
          timing,
          matcher: (loaded) =>
            createReplayMatcher(loaded.exchanges, {
              eager: true,
              ...matchingOptions(config),
              semantic: exactOnly ? false : { ...config.match.semantic, ...(threshold !== undefined ? { threshold } : {}) },
            }),
          // Per opening of a tape: its own MCP sessions, ids and notifications, its own fault plan.
          responders: (_loaded, opening) => [
            createOAuthResponder(),
            createMcpResponder({ ...(sideEffects ? { sideEffects } : {}), ...(opening.faults ? { faults: opening.faults } : {}) }),
          ],
          ...(sideEffects ? { allowLive: allowLiveFor(createSideEffectPolicy({ file: sideEffects })) } : {}),
          ...(ctx.values['no-match-headers'] === true || !config.matchHeaders ? { matchHeaders: false } : {}),
        },
        ...(faults ? { faults: faults.planFor } : {}),
        ...(expect ? { expect: expectJudge(expect) } : {}),
        ...(rerecord.length > 0 ? { rerecord } : {}),
        ...(maxAge ? { maxAge } : {}),
      });
      noticeLines(ctx, [
        `serving tapes from ${store.location} (mode ${mode}); a test's tape: ${server.url}/@NAME/...`,
        ...(faults?.rules ?? []).map((r) => `this run: fault ${r} (counted per test's tape)`),
        ...(rerecord.length > 0 ? [`this run: tests matching ${rerecord.map((g) => `"${g}"`).join(', ')} record their tape afresh`] : []),
      ]);
      return serveTapesUntilSignal(server, ctx, log, { orphans, expect: expectText });
    });
  },
};

async function serveTapesUntilSignal(
  server: RunningServe,
  ctx: CommandContext,
  log: Logger,
  opts: { orphans: { prune: boolean } | undefined; expect: string | undefined },
): Promise<number> {
  const stopped = untilStopped(log);
  ctx.stdout.write(`listening on ${server.url}\n`);
  await stopped;
  const report = await server.close();
  const lines = formatServeReport(report);
  const unmet = report.filter((t) => (t.expect?.missing.length ?? 0) > 0);
  const trouble = unmet.length > 0 || report.some((t) => t.missed > 0 || t.error !== undefined || t.failed !== undefined);
  // The head line says what went wrong across tapes; each tape's own line, when that tape had trouble.
  noticeLines(ctx, [
    trouble ? warning(lines[0] as string) : (lines[0] as string),
    ...report.map((t, i) => {
      const line = lines[i + 1] as string;
      const bad = t.error !== undefined || t.failed !== undefined || (t.expect?.missing.length ?? 0) > 0;
      return bad ? { text: line, tone: 'error' as const } : t.missed > 0 ? warning(line) : line;
    }),
    ...expectLines(report, server.unknownExpectNames(), opts.expect),
  ]);
  const orphans = opts.orphans === undefined ? undefined : await server.orphans();
  const pruned = opts.orphans?.prune === true ? await server.pruneOrphans() : undefined;
  if (orphans !== undefined) noticeLines(ctx, orphanLines(orphans, pruned));
  if (ctx.values.json === true)
    ctx.stdout.write(`${JSON.stringify({ tapes: report, ...(orphans ? { orphans } : {}), ...(pruned ? { pruned } : {}) })}\n`);
  log.flush();
  return report.some((t) => t.failed !== undefined) || unmet.length > 0 ? 1 : 0;
}

/** `--expect`: each test's tape that missed expected calls, in `diff`'s words; a name no tape called, once. */
function expectLines(report: readonly TapeReport[], unknown: readonly string[], expect: string | undefined): (string | Said)[] {
  if (expect === undefined) return [];
  const judged = report.filter((t) => t.expect !== undefined);
  const unmet = judged.filter((t) => (t.expect?.missing.length ?? 0) > 0);
  return [
    ...unknown.map((n) => {
      const near = expectKindNear(n);
      return warning(
        `--expect names ${n}, which no replayed tape's recording called (a tool or model name as the tape has it)` +
          `${near !== undefined ? `: did you mean ${near}?` : ''}`,
      );
    }),
    unmet.length === 0
      ? `expected calls (--expect ${expect}): all made, in ${judged.length} replayed tape(s)`
      : {
          text: `expected calls (--expect ${expect}): ${unmet.length} of ${judged.length} replayed tape(s) missed some`,
          tone: 'error' as const,
        },
    ...unmet.flatMap((t) => (t.expect?.report ?? []).map((l, i) => ({ text: i === 0 ? `${t.tape}: ${l}` : l, tone: 'error' as const }))),
  ];
}

/** `--orphans`: the recordings no test opened; with `--prune-orphans`, what was deleted. */
function orphanLines(orphans: readonly string[], pruned: PrunedOrphans | undefined): (string | Said)[] {
  if (orphans.length === 0) return ['no orphan tapes: every recording in the folder belongs to a test of this run'];
  if (pruned === undefined)
    return [
      warning(`${orphans.length} orphan tape(s): no test of this run opened them (--prune-orphans deletes them after a complete run)`),
      ...orphans.map((n) => `  ${n}`),
    ];
  return [
    `deleted ${pruned.removed.length} orphan tape(s): no test of this run opened them`,
    ...pruned.removed.map((n) => `  ${n}`),
    ...pruned.skipped.map((s) => warning(`  ${s.name} not deleted: ${s.reason}`)),
  ];
}

function asFlag<T>(flag: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof TapedeckError && err.code === 'BAD_ARGS') throw new TapedeckError('BAD_ARGS', `--${flag}: ${err.message}`);
    throw err;
  }
}

/** One line for the whole run, then one per tape. */
export function formatServeReport(report: readonly TapeReport[]): string[] {
  const recorded = report.filter((t) => t.mode === 'record' && t.error === undefined).length;
  const replayed = report.filter((t) => t.mode === 'replay' && t.error === undefined).length;
  const missed = report.reduce((n, t) => n + t.missed, 0);
  const blocked = report.reduce((n, t) => n + t.blocked, 0);
  const similar = report.reduce((n, t) => n + t.similar, 0);
  const faults = report.reduce((n, t) => n + t.faults, 0);
  const failed = report.filter((t) => t.error !== undefined).length;
  const head =
    `${report.length} tape(s): ${recorded} recorded, ${replayed} replayed` +
    `${missed > 0 ? `, ${missed} request(s) missed${blocked > 0 ? ` (${blocked} blocked as side effects)` : ''}` : ''}` +
    `${similar > 0 ? `, ${similar} answer(s) by similarity` : ''}${faults > 0 ? `, ${faults} fault(s) injected` : ''}` +
    `${failed > 0 ? `, ${failed} could not be opened` : ''}`;
  const width = Math.min(48, Math.max(0, ...report.map((t) => t.tape.length)));
  return [
    head,
    ...report.map((t) => {
      const name = `  ${t.tape.padEnd(width)}  `;
      if (t.error !== undefined) return `${name}not opened: ${t.error.message}`;
      const replay =
        `replayed ${t.replayed}${t.similar > 0 ? ` (${t.similar} by similarity)` : ''}, ` +
        `missed ${t.missed}${t.blocked > 0 ? ` (${t.blocked} blocked)` : ''}${t.live > 0 ? `, live ${t.live}` : ''}` +
        `${t.savedAs !== undefined ? ` (saved as ${t.savedAs})` : ''}`;
      // A tape recorded, closed, then opened again in auto mode (a retried test) was replayed too.
      const what =
        t.mode === 'replay'
          ? replay
          : `recorded ${t.recorded} exchange(s)${t.replayed + t.missed + t.live > 0 ? `; opened again: ${replay}` : ''}`;
      const faulted = t.faults > 0 ? `; ${t.faults} fault(s) injected (rule ${t.firstFault ?? '?'}${t.faults > 1 ? ', ...' : ''})` : '';
      const firstMiss = t.firstMiss !== undefined ? `; first miss: ${t.firstMiss}` : '';
      const earlier =
        t.earlier !== undefined ? `; "${t.earlier}", this test's tape by the earlier naming rule, is still there: delete it` : '';
      const refreshed =
        t.refreshed === 'rerecord'
          ? ' (afresh: --rerecord)'
          : t.refreshed === 'max-age'
            ? ' (afresh: older than --max-age)'
            : t.refreshed === 'tapedeck-error'
              ? " (afresh: it held tapedeck's own error, made when the upstream gave no answer)"
              : '';
      const unmet = (t.expect?.missing.length ?? 0) > 0 ? `; ${t.expect?.missing.length} expected call(s) never made` : '';
      return `${name}${what}${refreshed}${faulted}${firstMiss}${unmet}${earlier}${t.failed !== undefined ? `; INCOMPLETE: ${t.failed}` : ''}`;
    }),
  ];
}
