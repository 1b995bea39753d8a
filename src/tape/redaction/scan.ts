import { readFile } from 'node:fs/promises';
import { resolveSideFile } from '../paths.js';
import type { StoredBody, TapeStore } from '../store.js';
import { linesOf, type TapeRecord } from '../tape-reader.js';
import { REDACTED, type RedactOptions } from './redact.js';
import { parseJson } from '../json-depth.js';
import { secretHeaderMatcher } from './secret-headers.js';
import { PROTOCOL_HEADER, protocolSecrets } from './secret-protocols.js';
import { secretQueryMatcher } from './secret-query.js';
import { createSecretDetector, secretPreview, type SecretDetector, type SecretReplacer } from './secrets.js';

/** One credential-looking value left on a tape. Never carries the value itself. */
export interface SecretFinding {
  /** The tape file. */
  file: string;
  /** 1-based line of the tape. */
  line: number;
  /** The exchange's id, when the line is an exchange. */
  exchange?: string;
  /** Where in the line (or side file): `request.body.json.api_key`, `response.events[3].data`, ... */
  path: string;
  /**
   * A value rule's id (gitleaks ids), `field` (a secret-named field), `secret-header`, `secret-query` (a parameter of
   * the request or of an upstream URL), `secret-subprotocol` (a key in `Sec-WebSocket-Protocol`) or `secret-url` (the
   * password of an upstream URL).
   */
  rule: string;
  /** The first characters (the rule's own prefix) and the length; nothing of a field-name match. */
  preview: string;
}

export interface ScanResult {
  findings: SecretFinding[];
  /** Side files that could not be scanned (missing, or named outside the tape's folder). */
  problems: string[];
}

/**
 * Report every credential-looking value on a tape: what the writer's redaction would have replaced (field names,
 * value rules, secret headers and query parameters) and did not, because the tape was written by an older
 * tapedeck, edited by hand, or recorded with rules that have grown since. Side files are scanned too.
 */
export async function scanTapeFile(file: string, opts: RedactOptions & { secrets?: SecretDetector } = {}): Promise<ScanResult> {
  const text = await readFile(file, 'utf8');
  return scanRecords(file, linesOf(text), (body) => readFile(resolveSideFile(file, body.file)), opts);
}

/** Scan a tape in any store: its stored records and large bodies. `file` in findings is where the tape is. */
export async function scanTape(
  store: TapeStore,
  name: string,
  opts: RedactOptions & { secrets?: SecretDetector } = {},
): Promise<ScanResult> {
  // A side file is scanned as it is, even when it no longer matches its hash (tampered with, or edited by hand).
  if (store.kind === 'dir') return scanTapeFile(store.where(name), opts);
  return scanRecords(store.where(name), store.lines(name), (body) => store.readBlob(name, body), opts);
}

/** Every credential-looking value in a tape's records (and its large bodies, read with `readStored`). */
async function scanRecords(
  file: string,
  records: Iterable<TapeRecord> | AsyncIterable<TapeRecord>,
  readStored: (body: StoredBody) => Promise<Buffer>,
  opts: RedactOptions & { secrets?: SecretDetector },
): Promise<ScanResult> {
  const secrets = opts.secrets ?? createSecretDetector(opts);
  const secretHeader = secretHeaderMatcher(opts.headers);
  const secretQuery = secretQueryMatcher(opts.query);
  const findings: SecretFinding[] = [];
  const problems: string[] = [];
  for await (const record of records) {
    const raw = record.text;
    const i = record.line - 1;
    if (raw.trim() === '') continue;
    const seen = new Set<string>();
    let exchange: string | undefined;
    const report: SecretReplacer = (secret, rule, path) => {
      // One finding per value and place: a value rule and a field name can both see the same secret.
      const key = `${path.replace(/\([^)]*\)$/, '')}\u0000${secret}`;
      if (!seen.has(key)) {
        seen.add(key);
        findings.push({
          file,
          line: i + 1,
          ...(exchange !== undefined ? { exchange } : {}),
          path,
          rule,
          preview: secretPreview(secret, rule),
        });
      }
      return secret;
    };
    let value: unknown;
    try {
      // A line too deep to walk is scanned as the text it is.
      value = parseJson(raw);
    } catch {
      if (secrets.mayHold(raw)) secrets.redact(raw, report, '(unparsable line)');
      continue;
    }
    const rec = value as Record<string, unknown> | null;
    if (rec !== null && typeof rec === 'object' && typeof rec.id === 'string') exchange = rec.id;
    if (rec === null || typeof rec !== 'object' || rec.type !== 'exchange') {
      if (rec !== null && typeof rec === 'object' && rec.type === 'header' && Array.isArray(rec.routes))
        for (const [n, route] of (rec.routes as unknown[]).entries()) {
          const upstream = (route as { upstream?: unknown } | null)?.upstream;
          if (typeof upstream === 'string') urlSecrets(upstream, `routes[${n}].upstream`, secretQuery, report);
        }
      if (secrets.mayHold(raw)) secrets.redact(value, report);
      // A session's messages stored apart (large ones) are read too.
      if (rec !== null && typeof rec === 'object' && rec.type === 'frames' && Array.isArray(rec.frames)) {
        if (typeof rec.exchange === 'string') exchange = rec.exchange;
        for (const [n, f] of (rec.frames as unknown[]).entries())
          await scanStored((f as { data?: unknown } | null)?.data, `frames[${n}].data`, i, report);
      }
      continue;
    }
    if (typeof rec.upstream === 'string') urlSecrets(rec.upstream, 'upstream', secretQuery, report);
    const request = rec.request as Record<string, unknown> | undefined;
    const response = rec.response as Record<string, unknown> | undefined;
    // Names first (they say what the value is), then the walk over everything, then side files.
    if (Array.isArray(request?.query)) {
      for (const pair of request.query as unknown[]) {
        if (!Array.isArray(pair)) continue;
        const [k, v] = pair as unknown[];
        if (typeof k === 'string' && typeof v === 'string' && secretQuery(k) && v !== '' && v !== REDACTED)
          report(v, 'secret-query', `request.query.${k}`);
      }
    }
    for (const [side, part] of [
      ['request', request],
      ['response', response],
    ] as const) {
      const headers = part?.headers;
      if (headers === null || typeof headers !== 'object') continue;
      for (const [name, v] of Object.entries(headers as Record<string, unknown>)) {
        if (typeof v !== 'string') continue;
        if (secretHeader(name) && v !== '' && v !== REDACTED) report(v, 'secret-header', `${side}.headers.${name}`);
        else if (name.toLowerCase() === PROTOCOL_HEADER)
          for (const key of protocolSecrets(v)) report(key, 'secret-subprotocol', `${side}.headers.${name}`);
      }
    }
    if (secrets.mayHold(raw)) secrets.redact(value, report);
    for (const [side, part] of [
      ['request', request],
      ['response', response],
    ] as const)
      await scanStored(part?.body, `${side}.body`, i, report);
    const frames = (rec.websocket as { frames?: unknown } | undefined)?.frames;
    if (Array.isArray(frames))
      for (const [n, f] of (frames as unknown[]).entries())
        await scanStored((f as { data?: unknown } | null)?.data, `websocket.frames[${n}].data`, i, report);
    // A stream stored apart: its events, one per line of its side file.
    const stream = response?.eventsFile as Record<string, unknown> | undefined;
    if (stream?.kind === 'file' && typeof stream.file === 'string') {
      const where = `response.eventsFile(side file ${stream.file})`;
      let content: string;
      try {
        content = (await readStored(stream as StoredBody)).toString('utf8');
      } catch (err) {
        problems.push(`${file}:${i + 1}: ${where}: ${(err as Error).message}`);
        continue;
      }
      if (!secrets.mayHold(content)) continue;
      for (const [n, line] of content.split('\n').entries()) {
        if (line === '' || !secrets.mayHold(line)) continue;
        let parsed: unknown = line;
        try {
          parsed = parseJson(line);
        } catch {
          // scan it as text
        }
        secrets.redact(parsed, report, `${where}[${n}]`);
      }
    }
  }
  return { findings, problems };

  /** A body stored apart (a side file, a blob), unless it is binary: read and scanned like the line. */
  async function scanStored(data: unknown, at: string, i: number, report: SecretReplacer): Promise<void> {
    const body = data as Record<string, unknown> | undefined;
    if (body?.kind !== 'file' || typeof body.file !== 'string' || body.encoding === 'base64') return;
    const where = `${at}(side file ${body.file})`;
    let content: string;
    try {
      content = (await readStored(body as StoredBody)).toString('utf8');
    } catch (err) {
      problems.push(`${file}:${i + 1}: ${where}: ${(err as Error).message}`);
      return;
    }
    if (!secrets.mayHold(content)) return;
    let parsed: unknown = content;
    if (body.encoding === 'json') {
      try {
        parsed = parseJson(content);
      } catch {
        // scan it as text
      }
    }
    secrets.redact(parsed, report, where);
  }
}

/** Credentials in a URL on the tape (an upstream): its password, and parameters named as credentials. */
function urlSecrets(raw: string, path: string, secretQuery: (name: string) => boolean, report: SecretReplacer): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return;
  }
  let password = url.password;
  try {
    password = decodeURIComponent(password);
  } catch {
    // reported as it is written
  }
  if (password !== '' && password !== REDACTED) report(password, 'secret-url', `${path}(password)`);
  for (const [k, v] of url.searchParams) if (secretQuery(k) && v !== '' && v !== REDACTED) report(v, 'secret-query', `${path}.query.${k}`);
}
