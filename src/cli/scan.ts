import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/config.js';
import { TapedeckError } from '../errors.js';
import { tapeFile, TAPE_EXT } from '../tape/paths.js';
import { scanTapeFile, type SecretFinding } from '../tape/scan.js';
import { createSecretDetector } from '../tape/secrets.js';
import { listTapeNames } from '../tape/tape-reader.js';
import { stringValue, type Command } from './command.js';

export const scanCommand: Command = {
  name: 'scan',
  summary: 'report credential-looking values left on tapes (exit 1 when any): for CI and pre-commit',
  usage: [
    'tapedeck scan [TAPE...] [--dir DIR] [--json] [--config FILE]',
    '',
    '  TAPE     a tape name (in DIR) or a path to a .jsonl file; none: every tape in DIR',
    '  --json   print an array of findings {file, line, exchange, path, rule, preview}',
    '',
    'Side files are scanned too. Values are never printed: a preview shows a rule prefix and the length.',
    'Exit 0 when clean, 1 when anything is found, 2 for bad arguments.',
  ].join('\n'),
  options: { dir: { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' } },
  allowPositionals: true,
  async run(ctx) {
    const config = loadConfig(stringValue(ctx.values, 'config'), { dir: stringValue(ctx.values, 'dir') }, ctx.env);
    // A path to a tape file (what a pre-commit hook passes) or a tape name in the tape folder.
    const files =
      ctx.positionals.length > 0
        ? ctx.positionals.map((t) => (t.endsWith(TAPE_EXT) && existsSync(t) ? t : tapeFile(config.dir, t)))
        : (await listTapeNames(config.dir)).map((n) => tapeFile(config.dir, n));
    const secrets = createSecretDetector(config.redact);
    const findings: SecretFinding[] = [];
    for (const file of files) {
      if (!existsSync(file)) throw new TapedeckError('BAD_ARGS', `no tape at ${file}`);
      const result = await scanTapeFile(file, { ...config.redact, secrets });
      findings.push(...result.findings);
      for (const p of result.problems) ctx.stderr.write(`tapedeck scan: ${p}\n`);
    }
    if (ctx.values.json === true) {
      ctx.stdout.write(JSON.stringify(findings, null, 2) + '\n');
    } else {
      for (const f of findings) {
        const where = `${path.relative(process.cwd(), f.file) || f.file}:${f.line}${f.exchange !== undefined ? ` exchange ${f.exchange}` : ''}`;
        ctx.stdout.write(`${where}  ${f.path}  ${f.rule}  ${f.preview}\n`);
      }
      const tapes = new Set(findings.map((f) => f.file)).size;
      ctx.stdout.write(
        findings.length === 0
          ? `no credentials found in ${files.length} tape(s)\n`
          : `${findings.length} credential-looking value(s) in ${tapes} of ${files.length} tape(s)\n`,
      );
    }
    return findings.length > 0 ? 1 : 0;
  },
};
