import { writeFile } from 'node:fs/promises';
import { isTapedeckError, TapedeckError } from '../errors.js';
import { toHar } from '../export/har.js';
import { otlpJson, pushOtlp, tapeSpans, tracesUrl } from '../export/otlp.js';
import { stringValue, type Command } from './shared/command.js';
import { commandConfig, loadTapeRef, STORE_OPTIONS, STORE_USAGE } from './shared/store-options.js';
import { redactUrlCredentials } from '../tape/redaction/url-credentials.js';
import { notice } from './shared/notice.js';
import { requiredTape, TAPE_OPTION } from './shared/tape-arg.js';

export const exportCommand: Command = {
  name: 'export',
  summary: 'write a tape as HAR 1.2 or as an OpenTelemetry trace (OTLP/JSON, or pushed to an OTLP/HTTP endpoint)',
  usage: [
    'tapedeck export NAME --format har|otlp [--out FILE] [--otlp-endpoint URL] [--no-content] [--dir DIR | --store URL]',
    '',
    '  NAME                  the tape: a name, a unique prefix, latest, or a path to a .jsonl; --tape NAME says the same',
    '  --format har          HAR 1.2: one entry per exchange, timings, headers and bodies (redacted as on the tape),',
    '                        SSE events in _eventSourceMessages',
    '  --format otlp         one trace per tape, one span per exchange (GenAI and MCP semantic conventions)',
    '  --out FILE            write there (default: stdout, unless --otlp-endpoint is given)',
    '  --otlp-endpoint URL   push the trace over OTLP/HTTP (JSON), e.g. http://127.0.0.1:4318 (/v1/traces is added)',
    '  --no-content          otlp: leave out prompts, answers, tool arguments and results (opt-in attributes)',
    STORE_USAGE,
  ].join('\n'),
  options: {
    ...STORE_OPTIONS,
    ...TAPE_OPTION,
    format: { type: 'string', short: 'f' },
    out: { type: 'string', short: 'o' },
    'otlp-endpoint': { type: 'string' },
    'no-content': { type: 'boolean' },
  },
  allowPositionals: true,
  async run(ctx) {
    const name = requiredTape(ctx, 'tapedeck export NAME --format har|otlp [--out FILE] [--otlp-endpoint URL]');
    const format = stringValue(ctx.values, 'format');
    if (format !== 'har' && format !== 'otlp')
      throw new TapedeckError('BAD_ARGS', `--format must be har or otlp (got ${format === undefined ? 'nothing' : `"${format}"`})`);
    const out = stringValue(ctx.values, 'out');
    const endpoint = stringValue(ctx.values, 'otlp-endpoint');
    if (endpoint !== undefined && format !== 'otlp') throw new TapedeckError('BAD_ARGS', '--otlp-endpoint goes with --format otlp');
    if (ctx.values['no-content'] === true && format !== 'otlp') throw new TapedeckError('BAD_ARGS', '--no-content goes with --format otlp');
    // A bad URL is a bad flag: say so, naming it, before reading anything.
    if (endpoint !== undefined) {
      try {
        tracesUrl(endpoint);
      } catch (err) {
        throw isTapedeckError(err) ? new TapedeckError('BAD_ARGS', `--otlp-endpoint: ${err.message}`) : err;
      }
    }
    const tape = await loadTapeRef(commandConfig(ctx), name, { includeReplays: true });
    for (const p of tape.problems) notice(ctx, `${name}: line ${p.line}: ${p.message}`, 'warn', 'tapedeck export');

    if (format === 'har') {
      const har = toHar(tape);
      await emit(JSON.stringify(har, null, 2) + '\n', out, ctx.stdout);
      notice(ctx, `${har.log.entries.length} HAR entries${out ? ` -> ${out}` : ''}`, 'plain', 'tapedeck export');
      return 0;
    }
    const spans = tapeSpans(tape, { content: ctx.values['no-content'] !== true });
    if (out !== undefined || endpoint === undefined) await emit(otlpJson(spans) + '\n', out, ctx.stdout);
    if (endpoint !== undefined) await pushOtlp(spans, endpoint);
    notice(
      ctx,
      `${spans.length} spans (1 trace)${out ? ` -> ${out}` : ''}${endpoint ? ` pushed to ${redactUrlCredentials(tracesUrl(endpoint))}` : ''}`,
      'plain',
      'tapedeck export',
    );
    return 0;
  },
};

async function emit(text: string, out: string | undefined, stdout: NodeJS.WritableStream): Promise<void> {
  if (out === undefined) {
    await new Promise<void>((resolve, reject) => stdout.write(text, (err) => (err ? reject(err) : resolve())));
    return;
  }
  try {
    await writeFile(out, text);
  } catch (err) {
    throw new TapedeckError('EXPORT_FAILED', `cannot write ${out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
