/**
 * What drift writes never holds a key: its report (text, `--json`, `--markdown`) and the refreshed tape are redacted
 * as record redacts a tape (secret headers, query parameters and URL credentials; secrets in bodies, events and
 * meanings by field name and value rules, `tape/redact.ts`), and every key drift itself sent is replaced wherever it
 * comes back: an upstream that echoes the key in an error puts it in the answer, and from there into a finding.
 */
import { createRedactor, REDACTED, type RedactOptions } from '../tape/redaction/redact.js';
import type { Exchange } from '../tape/schema.js';

export interface Scrubber {
  /** `value` (an exchange, a report) with every key drift sent and every secret the rules find as `[REDACTED]`. */
  value<T>(value: T): T;
  /** An exchange as record would write it: its headers, query and upstream redacted too. */
  exchange(ex: Exchange): Exchange;
  /** Bytes as they stream (a body too large to hold): every key drift sent replaced, across chunk boundaries. */
  bytes(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<Buffer>;
}

/** Keys shorter than this are not searched for in text (they would replace ordinary words); none is that short. */
const MIN_KEY = 6;

export function createScrubber(keys: Iterable<string>, redact?: RedactOptions): Scrubber {
  const redactor = createRedactor(redact);
  // Each key as sent, and as it reads inside a URL.
  const forms = [...new Set([...keys].filter((k) => k.length >= MIN_KEY).flatMap((k) => [k, encodeURIComponent(k)]))].sort(
    (a, b) => b.length - a.length,
  );
  const text = (s: string): string => {
    let out = s;
    for (const k of forms) if (out.includes(k)) out = out.split(k).join(REDACTED);
    return out;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      v.forEach((item, i) => {
        const nv = walk(item);
        if (nv !== item) (out ??= [...v])[i] = nv;
      });
      return out ?? v;
    }
    const obj = v as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    // A tape body's base64 is binary: replacing text inside it would corrupt it.
    const binary = typeof obj.kind === 'string' && typeof obj.base64 === 'string';
    for (const k in obj) {
      if (binary && k === 'base64') continue;
      const nv = walk(obj[k]);
      if (nv !== obj[k]) (out ??= { ...obj })[k] = nv;
    }
    return out ?? obj;
  };
  const value = <T>(v: T): T => redactor.secrets.redact(forms.length === 0 ? v : (walk(v) as T), () => REDACTED);
  const needles = forms.map((k) => Buffer.from(k));
  const longest = Math.max(0, ...needles.map((n) => n.byteLength));
  const marker = Buffer.from(REDACTED);
  const replaceIn = (buf: Buffer): Buffer => {
    let out = buf;
    for (const n of needles) {
      if (out.indexOf(n) === -1) continue;
      const parts: Buffer[] = [];
      let at = 0;
      for (let i = out.indexOf(n); i !== -1; i = out.indexOf(n, at)) {
        parts.push(out.subarray(at, i), marker);
        at = i + n.byteLength;
      }
      parts.push(out.subarray(at));
      out = Buffer.concat(parts);
    }
    return out;
  };
  return {
    value,
    exchange: (ex) => value(redactor.exchange(ex)),
    async *bytes(source) {
      // The last bytes of each chunk wait for the next: a key may straddle two chunks.
      let carry: Buffer = Buffer.alloc(0);
      for await (const chunk of source) {
        if (needles.length === 0) {
          yield Buffer.from(chunk);
          continue;
        }
        const buf = replaceIn(Buffer.concat([carry, Buffer.from(chunk)]));
        const keep = Math.min(buf.byteLength, longest - 1);
        carry = Buffer.from(buf.subarray(buf.byteLength - keep));
        if (buf.byteLength > keep) yield buf.subarray(0, buf.byteLength - keep);
      }
      if (carry.byteLength > 0) yield carry;
    },
  };
}
