/**
 * The shape of a JSON answer, what a client that parses it relies on: every field path with the JSON types seen
 * there. Values never count (ids, timestamps and texts change every call); structure does.
 *
 * - Array elements share one path (`choices[]`), so an answer with more items has the same shape.
 * - An object with a string `type` is a variant of its path (`content[]<tool_use>`): an answer that holds a tool
 *   call where the recording held text has other variants, not missing fields. A variant present on one side only
 *   is reported as such (the answer is of another kind); fields are compared within the variants both sides have.
 * - `null` is no type change (`content: null` beside a text): a field that may be null is a value, not structure.
 */

export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/** Path -> the types seen there. Paths: `$`, `$.usage.prompt_tokens`, `$.choices[].message`, `$.content[]<text>.text`. */
export type Shape = Map<string, Set<JsonType>>;

const MAX_DEPTH = 64;

function typeOf(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'object';
}

/**
 * The shape of one value, added to `into` (so the shapes of many values, e.g. a stream's events, unite). `root`
 * names the value (`$`, or a stream's event type, whose `type` then needs no variant of its own).
 */
export function shapeOf(value: unknown, into: Shape = new Map(), root = '$'): Shape {
  walk(value, root, into, 0, root !== '$');
  return into;
}

function walk(v: unknown, path: string, out: Shape, depth: number, plainRoot = false): void {
  const t = typeOf(v);
  const seen = out.get(path) ?? new Set<JsonType>();
  seen.add(t);
  out.set(path, seen);
  if (depth >= MAX_DEPTH) return;
  if (t === 'array') for (const item of v as unknown[]) walk(item, `${path}[]`, out, depth + 1);
  else if (t === 'object') {
    const obj = v as Record<string, unknown>;
    const variant = !plainRoot && typeof obj.type === 'string' && obj.type !== '' ? `${path}<${obj.type}>` : undefined;
    if (variant !== undefined) {
      out.set(variant, new Set(['object']));
    }
    const base = variant ?? path;
    for (const [k, child] of Object.entries(obj)) walk(child, `${base}.${k}`, out, depth + 1);
  }
}

export type ShapeChange =
  /** A field the recording had and the fresh answer lacks (a client reading it breaks). */
  | { kind: 'removed'; path: string; types: JsonType[] }
  /** A field only the fresh answer has. */
  | { kind: 'added'; path: string; types: JsonType[] }
  /** One removed and one added beside it with the same types: most likely a rename. */
  | { kind: 'renamed'; path: string; to: string; types: JsonType[] }
  /** The same field, another type (null aside). */
  | { kind: 'type'; path: string; from: JsonType[]; to: JsonType[] }
  /** A kind of object (`<type>`) on one side only: the answer is of another kind there. */
  | { kind: 'variant-removed' | 'variant-added'; path: string };

const nonNull = (s: ReadonlySet<JsonType> | undefined): JsonType[] => [...(s ?? [])].filter((t) => t !== 'null').sort();

/**
 * What changed from `before` (the recording) to `after` (the fresh answer). Only the topmost change of a subtree is
 * reported (a removed object is one change, not one per field), and nothing below a variant one side lacks.
 */
export function compareShapes(before: Shape, after: Shape): ShapeChange[] {
  const out: ShapeChange[] = [];
  const reported: string[] = [];
  const under = (p: string): boolean => reported.some((r) => p.startsWith(r) && /^[.<[]/.test(p.slice(r.length)));
  // Below a value that is null (or of another type) on the other side there is nothing to compare.
  const openOn = (shape: Shape, p: string): boolean => {
    for (let parent = parentOf(p); parent !== undefined; parent = parentOf(parent)) {
      const types = shape.get(parent);
      if (types === undefined) return false;
      if (!types.has('object') && !types.has('array')) return false;
    }
    return true;
  };
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  for (const p of paths) {
    if (under(p)) continue;
    const a = before.get(p);
    const b = after.get(p);
    const variant = p.endsWith('>');
    if (a !== undefined && b === undefined) {
      if (!openOn(after, p)) continue;
      out.push(variant ? { kind: 'variant-removed', path: p } : { kind: 'removed', path: p, types: nonNull(a) });
      reported.push(p);
    } else if (a === undefined && b !== undefined) {
      if (!openOn(before, p)) continue;
      out.push(variant ? { kind: 'variant-added', path: p } : { kind: 'added', path: p, types: nonNull(b) });
      reported.push(p);
    } else if (a !== undefined && b !== undefined) {
      const from = nonNull(a);
      const to = nonNull(b);
      if (from.length > 0 && to.length > 0 && from.join() !== to.join()) {
        out.push({ kind: 'type', path: p, from, to });
        reported.push(p);
      }
    }
  }
  return pairRenames(out);
}

/** The root a path starts from: `$` for an answer, `«TYPE»` for a stream's events of one type. */
const ROOT = /^(\$|«[^»]*»)/;

/** `a.b.c` -> `a.b`; `a[]` -> `a`; `a<x>` -> `a`; a root (`$`, `«message_start»`) -> undefined. */
export function parentOf(path: string): string | undefined {
  const root = ROOT.exec(path)?.[0] ?? '';
  if (path === root) return undefined;
  const m = /^(.*?)(\.[^.[<]*|\[\]|<[^>]*>)$/.exec(path.slice(root.length));
  return m === null ? undefined : root + (m[1] ?? '');
}

/** A removed and an added field under the same parent with the same types, each the only one there: a rename. */
function pairRenames(changes: ShapeChange[]): ShapeChange[] {
  const removed = changes.filter((c): c is Extract<ShapeChange, { kind: 'removed' }> => c.kind === 'removed');
  const added = changes.filter((c): c is Extract<ShapeChange, { kind: 'added' }> => c.kind === 'added');
  const paired = new Set<ShapeChange>();
  const out: ShapeChange[] = [];
  for (const r of removed) {
    const siblings = removed.filter((x) => parentOf(x.path) === parentOf(r.path));
    const candidates = added.filter((x) => parentOf(x.path) === parentOf(r.path) && !paired.has(x));
    if (siblings.length !== 1 || candidates.length !== 1) continue;
    const a = candidates[0] as (typeof added)[number];
    if (a.types.join() !== r.types.join()) continue;
    paired.add(r).add(a);
    out.push({ kind: 'renamed', path: r.path, to: a.path, types: r.types });
  }
  return [...out, ...changes.filter((c) => !paired.has(c))];
}

/** A stream's events of one type, as a shape root. */
export const eventRoot = (type: string): string => `«${type}»`;

/** A path for people: `$.choices[].message.content` -> `choices[].message.content`; `«ping».x` -> `event ping: x`. */
export function showPath(path: string): string {
  if (path === '$') return '(the answer)';
  const event = /^«([^»]*)»\.?(.*)$/.exec(path);
  if (event) return event[2] === '' ? `event ${event[1]}` : `event ${event[1]}: ${event[2]}`;
  return path.replace(/^\$\.?/, '');
}
