/**
 * What a semantic match set aside, said in its reason (the `x-tapedeck-*` headers' explanation and the replay tape's
 * `match.reason`): each per-run value that differed between the request and the recording served (a clock in the
 * system prompt, a provider id, a labelled nonce, an identifier the tape shows varying) and each request field
 * that never changes the answer (`user`, `metadata`, ...). A clock is quoted whole; an id by its first characters
 * only, and a nonce not at all (it may be a token).
 */
import type { MarkedValue } from './noise.js';
import type { VaryingGroup } from './semantic-index.js';
import type { SemanticView } from './view.js';

/** The values and fields set aside between a recording (`recorded`) and the request that was served it. */
export function setAside(recorded: SemanticView, incoming: SemanticView, group?: VaryingGroup): string[] {
  const out: string[] = [];
  incoming.fields.forEach((f, i) => {
    const r = recorded.fields[i];
    if (r === undefined) return;
    const where = `${f.path}${f.position === 'system' ? ' (system prompt)' : ''}`;
    f.info.aside.forEach((v, k) => {
      const was = r.info.aside[k];
      if (was !== undefined && was.value !== v.value) out.push(`${label(v)} at ${where}: ${shown(v)} (recorded ${shown(was)})`);
    });
  });
  if (group !== undefined) {
    const mine = incoming.fields.flatMap((f) => f.info.kept.map((v) => ({ v, path: f.path })));
    const theirs = recorded.fields.flatMap((f) => f.info.kept);
    const ids = group.entries.map((e) => `#${e.exchange.id}`);
    group.slots.forEach((constant, k) => {
      const here = mine[k];
      const was = theirs[k];
      if (constant !== undefined || here === undefined || was === undefined || was.value === here.v.value) return;
      out.push(
        `${label(here.v)} at ${here.path}: ${shown(here.v)} (recorded ${shown(was)}; it varies between recordings ${ids.slice(0, 3).join(', ')} on this tape)`,
      );
    });
  }
  for (const [k, v] of Object.entries(incoming.ignored)) if (recorded.ignored[k] !== v) out.push(`\`${k}\``);
  for (const k of Object.keys(recorded.ignored)) if (!(k in incoming.ignored)) out.push(`\`${k}\``);
  return out;
}

function label(v: MarkedValue): string {
  return v.kind === 'clock' ? 'a clock' : v.kind === 'uuid' ? 'a UUID' : v.kind === 'nonce' ? 'a labelled nonce' : 'a provider id';
}

function shown(v: MarkedValue): string {
  if (v.kind === 'clock') return `"${v.value}"`;
  if (v.kind === 'nonce') return '(value not shown)';
  const prefix = /^[a-z]+[-_]/i.exec(v.value)?.[0] ?? '';
  return `"${v.value.slice(0, prefix.length + 8)}…"`;
}

/** `; set aside: ...` for a reason, or nothing when nothing was. */
export function asideNote(items: readonly string[]): string {
  if (items.length === 0) return '';
  const shownItems = items.length > 6 ? [...items.slice(0, 6), `and ${items.length - 6} more`] : items;
  return `; set aside: ${shownItems.join('; ')}`;
}
