/**
 * The secret scan: what a tape still holds that redaction would have replaced (`tapedeck scan`, the checks before a
 * tape is shared). Read only; each line is scanned by small steps over one scan context: names first, then values,
 * then whatever the line stores apart.
 */
import { readFile } from 'node:fs/promises';
import { resolveSideFile } from '../paths.js';
import type { StoredBody, TapeStore } from '../store.js';
import { linesOf, type TapeRecord } from '../tape-reader.js';
import { REDACTED, type RedactOptions } from './redact.js';
import { parseJson } from '../json-depth.js';
import { secretHeaderMatcher } from './secret-headers.js';
import { PROTOCOL_HEADER, protocolSecrets } from './secret-protocols.js';
import { secretQueryMatcher } from './secret-query.js';
import { oauthSecrets } from './secret-oauth.js';
import type { Exchange } from '../schema.js';
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
   * the request or of an upstream URL), `secret-subprotocol` (a key in `Sec-WebSocket-Protocol`), `secret-url` (the
   * password of an upstream URL) or `secret-oauth` (an OAuth authorization code, a secret by its place).
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

/** What scanning one tape works with, and what it found so far. */
interface ScanContext {
  /** The tape file (or where the tape is), named in findings and problems. */
  file: string;
  readStored: (body: StoredBody) => Promise<Buffer>;
  secrets: SecretDetector;
  secretHeader: (name: string) => boolean;
  secretQuery: (name: string) => boolean;
  findings: SecretFinding[];
  problems: string[];
}

/** One line being scanned: its number, the exchange its findings belong to (once known), and where they go. */
interface LineScan {
  ctx: ScanContext;
  line: number;
  exchange: string | undefined;
  report: SecretReplacer;
}

type Fields = Record<string, unknown>;

/** Every credential-looking value in a tape's records (and its large bodies, read with `readStored`). */
async function scanRecords(
  file: string,
  records: Iterable<TapeRecord> | AsyncIterable<TapeRecord>,
  readStored: (body: StoredBody) => Promise<Buffer>,
  opts: RedactOptions & { secrets?: SecretDetector },
): Promise<ScanResult> {
  const ctx: ScanContext = {
    file,
    readStored,
    secrets: opts.secrets ?? createSecretDetector(opts),
    secretHeader: secretHeaderMatcher(opts.headers),
    secretQuery: secretQueryMatcher(opts.query),
    findings: [],
    problems: [],
  };
  for await (const record of records) {
    if (record.text.trim() === '') continue;
    await scanLine(lineScan(ctx, record.line), record.text);
  }
  return { findings: ctx.findings, problems: ctx.problems };
}

function lineScan(ctx: ScanContext, line: number): LineScan {
  const seen = new Set<string>();
  const scan: LineScan = {
    ctx,
    line,
    exchange: undefined,
    report: (secret, rule, path) => {
      // One finding per value and place: a value rule and a field name can both see the same secret.
      const key = `${path.replace(/\([^)]*\)$/, '')}\u0000${secret}`;
      if (!seen.has(key)) {
        seen.add(key);
        ctx.findings.push({
          file: ctx.file,
          line,
          ...(scan.exchange !== undefined ? { exchange: scan.exchange } : {}),
          path,
          rule,
          preview: secretPreview(secret, rule),
        });
      }
      return secret;
    },
  };
  return scan;
}

async function scanLine(scan: LineScan, raw: string): Promise<void> {
  const { secrets } = scan.ctx;
  let value: unknown;
  try {
    // A line too deep to walk is scanned as the text it is.
    value = parseJson(raw);
  } catch {
    if (secrets.mayHold(raw)) secrets.redact(raw, scan.report, '(unparsable line)');
    return;
  }
  const rec = value as Fields | null;
  if (rec !== null && typeof rec === 'object' && typeof rec.id === 'string') scan.exchange = rec.id;
  if (rec === null || typeof rec !== 'object' || rec.type !== 'exchange') await scanOtherRecord(scan, rec, value, raw);
  else await scanExchange(scan, rec, value, raw);
}

/** A line that is not an exchange: the header (and its routes' upstreams), a session's frames, anything else. */
async function scanOtherRecord(scan: LineScan, rec: Fields | null, value: unknown, raw: string): Promise<void> {
  const { secrets, secretQuery } = scan.ctx;
  if (rec !== null && typeof rec === 'object' && rec.type === 'header' && Array.isArray(rec.routes))
    for (const [n, route] of (rec.routes as unknown[]).entries()) {
      const upstream = (route as { upstream?: unknown } | null)?.upstream;
      if (typeof upstream === 'string') urlSecrets(upstream, `routes[${n}].upstream`, secretQuery, scan.report);
    }
  if (secrets.mayHold(raw)) secrets.redact(value, scan.report);
  // A session's messages stored apart (large ones) are read too.
  if (rec !== null && typeof rec === 'object' && rec.type === 'frames' && Array.isArray(rec.frames)) {
    if (typeof rec.exchange === 'string') scan.exchange = rec.exchange;
    for (const [n, f] of (rec.frames as unknown[]).entries())
      await scanStored(scan, (f as { data?: unknown } | null)?.data, `frames[${n}].data`);
  }
}

/** An exchange: names first (they say what the value is), then the walk over everything, then what is stored apart. */
async function scanExchange(scan: LineScan, rec: Fields, value: unknown, raw: string): Promise<void> {
  const { secrets, secretQuery } = scan.ctx;
  if (typeof rec.upstream === 'string') urlSecrets(rec.upstream, 'upstream', secretQuery, scan.report);
  const request = rec.request as Fields | undefined;
  const response = rec.response as Fields | undefined;
  secretNames(scan, request, response);
  placedSecrets(scan, request, response);
  if (secrets.mayHold(raw)) secrets.redact(value, scan.report);
  for (const [side, part] of [
    ['request', request],
    ['response', response],
  ] as const)
    await scanStored(scan, part?.body, `${side}.body`);
  const frames = (rec.websocket as { frames?: unknown } | undefined)?.frames;
  if (Array.isArray(frames))
    for (const [n, f] of (frames as unknown[]).entries())
      await scanStored(scan, (f as { data?: unknown } | null)?.data, `websocket.frames[${n}].data`);
  await scanEventsFile(scan, response);
}

/** Values under names that say they are secrets: the request's query parameters, both sides' headers. */
function secretNames(scan: LineScan, request: Fields | undefined, response: Fields | undefined): void {
  const { secretHeader, secretQuery } = scan.ctx;
  const { report } = scan;
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
    for (const [name, v] of Object.entries(headers as Fields)) {
      if (typeof v !== 'string') continue;
      if (secretHeader(name) && v !== '' && v !== REDACTED) report(v, 'secret-header', `${side}.headers.${name}`);
      else if (name.toLowerCase() === PROTOCOL_HEADER)
        for (const key of protocolSecrets(v)) report(key, 'secret-subprotocol', `${side}.headers.${name}`);
    }
  }
}

/** OAuth's authorization codes, secrets by their place (`secret-oauth.ts`), on a well-formed exchange. */
function placedSecrets(scan: LineScan, request: Fields | undefined, response: Fields | undefined): void {
  const ok = (part: Fields | undefined): boolean => part !== undefined && part.headers !== null && typeof part.headers === 'object';
  if (!ok(request) || !Array.isArray(request?.query) || request.body === null || typeof request.body !== 'object') return;
  if (response !== undefined && !ok(response)) return;
  const ex = { request, response } as unknown as Pick<Exchange, 'request' | 'response'>;
  for (const found of oauthSecrets(ex)) scan.report(found.value, 'secret-oauth', found.path);
}

/** A stream stored apart: its events, one per line of its side file. */
async function scanEventsFile(scan: LineScan, response: Fields | undefined): Promise<void> {
  const { secrets } = scan.ctx;
  const stream = response?.eventsFile as Fields | undefined;
  if (stream?.kind !== 'file' || typeof stream.file !== 'string') return;
  const where = `response.eventsFile(side file ${stream.file})`;
  const content = await readStoredText(scan, stream as StoredBody, where);
  if (content === undefined || !secrets.mayHold(content)) return;
  for (const [n, line] of content.split('\n').entries()) {
    if (line === '' || !secrets.mayHold(line)) continue;
    let parsed: unknown = line;
    try {
      parsed = parseJson(line);
    } catch {
      // scan it as text
    }
    secrets.redact(parsed, scan.report, `${where}[${n}]`);
  }
}

/** A body stored apart (a side file, a blob), unless it is binary: read and scanned like the line. */
async function scanStored(scan: LineScan, data: unknown, at: string): Promise<void> {
  const { secrets } = scan.ctx;
  const body = data as Fields | undefined;
  if (body?.kind !== 'file' || typeof body.file !== 'string' || body.encoding === 'base64') return;
  const where = `${at}(side file ${body.file})`;
  const content = await readStoredText(scan, body as StoredBody, where);
  if (content === undefined || !secrets.mayHold(content)) return;
  let parsed: unknown = content;
  if (body.encoding === 'json') {
    try {
      parsed = parseJson(content);
    } catch {
      // scan it as text
    }
  }
  secrets.redact(parsed, scan.report, where);
}

/** A stored body's text, or undefined with a problem noted when it cannot be read. */
async function readStoredText(scan: LineScan, body: StoredBody, where: string): Promise<string | undefined> {
  try {
    return (await scan.ctx.readStored(body)).toString('utf8');
  } catch (err) {
    scan.ctx.problems.push(`${scan.ctx.file}:${scan.line}: ${where}: ${(err as Error).message}`);
    return undefined;
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
