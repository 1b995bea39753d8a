/**
 * One client message of a live session against a recorded one: equal after leaving out what differs every run. JSON
 * is compared field by field, with secrets and their markers alike (`[REDACTED]`); fields named as per-run
 * identifiers (`event_id`, item and call ids) may differ, but consistently: the first time a recorded id is seen with
 * a new value they are bound, and from then on the recorded one stands for the new one (later messages that refer to
 * it must use it, and the recorded answers sent back carry it). Text is compared exactly, binary byte for byte.
 */
import { frameBytes, frameJson } from '../tape/frame.js';
import type { WsFrame } from '../tape/schema.js';
import type { SecretDetector } from '../tape/redaction/secrets.js';

type Id = string | number;

/** Recorded id <-> new id, for one session. */
export interface IdMap {
  toNew: Map<Id, Id>;
  toRecorded: Map<Id, Id>;
}

export function newIdMap(): IdMap {
  return { toNew: new Map(), toRecorded: new Map() };
}

export type FrameVerdict = { ok: true; bind: [Id, Id][] } | { ok: false; difference: string };

const isId = (v: unknown): v is Id => typeof v === 'string' || typeof v === 'number';

/** Whether `live` is the recorded client message `recorded`, under the session's id bindings so far. */
export function compareFrame(
  live: WsFrame,
  recorded: WsFrame,
  ids: IdMap,
  keys: ReadonlySet<string>,
  secrets: SecretDetector,
): FrameVerdict {
  if (live.kind !== recorded.kind) return { ok: false, difference: `a ${live.kind} message, recorded ${recorded.kind}` };
  const a = frameJson(live);
  const b = frameJson(recorded);
  if (a !== undefined && b !== undefined) {
    const bind = new Map<Id, Id>();
    const back = new Map<Id, Id>();
    const walk = (x: unknown, y: unknown, path: string, key: string | undefined): string | undefined => {
      if (key !== undefined && keys.has(key) && isId(x) && isId(y) && typeof x === typeof y) {
        const mapped = ids.toNew.get(y) ?? bind.get(y);
        if (mapped !== undefined)
          return mapped === x ? undefined : `${path}: ${short(x)}, recorded ${short(y)} (which is ${short(mapped)} in this session)`;
        const taken = ids.toRecorded.get(x) ?? back.get(x);
        if (taken !== undefined) return `${path}: ${short(x)} already stands for ${short(taken)} in this session, recorded ${short(y)}`;
        bind.set(y, x);
        back.set(x, y);
        return undefined;
      }
      if (Array.isArray(x) || Array.isArray(y)) {
        if (!Array.isArray(x) || !Array.isArray(y)) return `${path || 'message'}: ${kindOf(x)}, recorded ${kindOf(y)}`;
        if (x.length !== y.length) return `${path || 'message'}: ${x.length} items, recorded ${y.length}`;
        for (let i = 0; i < x.length; i++) {
          const d = walk(x[i], y[i], `${path}[${i}]`, key);
          if (d !== undefined) return d;
        }
        return undefined;
      }
      if (isPlain(x) && isPlain(y)) {
        for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
          const p = path === '' ? k : `${path}.${k}`;
          if (x[k] === undefined && y[k] !== undefined) return `${p}: absent, recorded ${short(y[k])}`;
          if (y[k] === undefined && x[k] !== undefined) return `${p}: ${short(x[k])}, not recorded`;
          const d = walk(x[k], y[k], p, k);
          if (d !== undefined) return d;
        }
        return undefined;
      }
      return x === y ? undefined : `${path || 'message'}: ${short(x)}, recorded ${short(y)}`;
    };
    const difference = walk(secrets.canonical(a), secrets.canonical(b), '', undefined);
    return difference === undefined ? { ok: true, bind: [...bind] } : { ok: false, difference };
  }
  const x = frameBytes(live);
  const y = frameBytes(recorded);
  if (x.equals(y)) return { ok: true, bind: [] };
  return {
    ok: false,
    difference:
      live.kind === 'binary'
        ? `binary message of ${x.byteLength} bytes differs from the recorded one (${y.byteLength} bytes)`
        : `text ${short(x.toString('utf8'))}, recorded ${short(y.toString('utf8'))}`,
  };
}

/** Add a verdict's bindings to the session's id map. */
export function bindIds(ids: IdMap, bind: readonly [Id, Id][]): void {
  for (const [rec, now] of bind) {
    ids.toNew.set(rec, now);
    ids.toRecorded.set(now, rec);
  }
}

/** A recorded server message with the recorded ids the session has bound replaced by the new ones (same frame when none is). */
export function withNewIds(frame: WsFrame, ids: IdMap, keys: ReadonlySet<string>): WsFrame {
  if (ids.toNew.size === 0) return frame;
  const json = frameJson(frame);
  if (json === undefined) return frame;
  let changed = false;
  const walk = (v: unknown, key: string | undefined): unknown => {
    if (key !== undefined && keys.has(key) && isId(v)) {
      const now = ids.toNew.get(v);
      if (now !== undefined && now !== v) {
        changed = true;
        return now;
      }
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (isPlain(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x, k);
      return out;
    }
    return v;
  };
  const out = walk(json, undefined);
  return changed ? { ...frame, data: { kind: 'json', json: out } } : frame;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  return Array.isArray(v) ? 'a list' : v === null ? 'null' : typeof v === 'object' ? 'an object' : typeof v;
}

function short(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
