import path from 'node:path';
import { scanTape, type SecretFinding } from '../tape/redaction/scan.js';
import { createSecretDetector } from '../tape/redaction/secrets.js';
import type { ResolvedTape } from '../tape/store.js';
import type { Command } from './shared/command.js';
import { styleFor } from '../inspect/format.js';
import { notice } from './shared/notice.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';

export const scanCommand: Command = {
  name: 'scan',
  summary: 'report credential-looking values left on tapes (exit 1 when any): for CI and pre-commit',
  usage: [
    'tapedeck scan [TAPE...] [--dir DIR | --store URL] [--namespace NS] [--json] [--config FILE]',
    '',
    '  TAPE     a tape name (or latest, a prefix) or a path to a .jsonl file; none: every tape in the store',
    '  --json   print an array of findings {file, line, exchange, path, rule, preview}',
    STORE_USAGE,
    '',
    'Side files are scanned too. Values are never printed: a preview shows a rule prefix and the length.',
    'Exit 0 when clean, 1 when anything is found, 2 for bad arguments.',
  ].join('\n'),
  options: { ...STORE_OPTIONS, json: { type: 'boolean' } },
  allowPositionals: true,
  async run(ctx) {
    const config = commandConfig(ctx);
    return withStore(config, async (store) => {
      // A path to a tape file (what a pre-commit hook passes), or a tape reference in the store; none: every tape.
      const refs: ResolvedTape[] = [];
      if (ctx.positionals.length > 0) for (const t of ctx.positionals) refs.push(await store.resolve(t, { includeReplays: true }));
      else for (const name of await store.names()) refs.push({ store, name, by: 'name' });
      const secrets = createSecretDetector(config.redact);
      const findings: SecretFinding[] = [];
      for (const ref of refs) {
        const result = await scanTape(ref.store, ref.name, { ...config.redact, secrets });
        findings.push(...result.findings);
        for (const p of result.problems) notice(ctx, p, 'warn', 'tapedeck scan');
      }
      if (ctx.values.json === true) {
        ctx.stdout.write(JSON.stringify(findings, null, 2) + '\n');
      } else {
        const style = styleFor(ctx.stdout, ctx.env);
        for (const f of findings) {
          const where = `${path.relative(process.cwd(), f.file) || f.file}:${f.line}${f.exchange !== undefined ? ` exchange ${f.exchange}` : ''}`;
          ctx.stdout.write(`${style.bold(where)}  ${f.path}  ${style.red(f.rule)}  ${f.preview}\n`);
        }
        const tapes = new Set(findings.map((f) => f.file)).size;
        ctx.stdout.write(
          findings.length === 0
            ? `${style.green(`no credentials found in ${refs.length} tape(s)`)}\n`
            : `${style.red(`${findings.length} credential-looking value(s) in ${tapes} of ${refs.length} tape(s)`)}\n`,
        );
      }
      return findings.length > 0 ? 1 : 0;
    });
  },
};
