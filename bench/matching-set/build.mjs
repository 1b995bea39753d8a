// Turning a family's items (two texts that differ in one way) into pairs of requests: each item asked both ways
// round (a -> b and b -> a), in each context (plain, with a closing sentence, as the last turn of a conversation),
// through the APIs in turn. Deterministic: the same items always give the same pairs in the same order.
import { APIS, CONTEXTS, conversation, fits, request } from './frame.mjs';

/** `"Users {must|can} reset ..."` -> the two texts. */
export function swap(template) {
  const m = /\{([^{}|]*)\|([^{}|]*)\}/.exec(template);
  if (m === null) throw new Error(`no {a|b} in: ${template}`);
  return [template.replace(m[0], m[1]), template.replace(m[0], m[2])];
}

/** A template with `{}` and word pairs -> one item per pair. */
export function slot(template, pairs) {
  return pairs.map(([a, b]) => [template.replaceAll('{}', a), template.replaceAll('{}', b)]);
}

/** Items: `{lang, domain, a, b, note}`. */
export function item(lang, domain, [a, b], note = '') {
  return { lang, domain, a, b, note };
}

/**
 * Pairs from text items: both directions, every context (or one in turn with `rotate`), the APIs in turn (MCP
 * takes a single question, so it skips the conversation context).
 */
export function textPairs(family, side, items, { contexts = CONTEXTS, apis = APIS, rotate = false } = {}) {
  const out = [];
  let turn = 0;
  let round = 0;
  for (const it of items) {
    for (const [from, to] of [
      [it.a, it.b],
      [it.b, it.a],
    ]) {
      // `rotate`: one context per direction, taken in turn (the harmless side needs fewer pairs per item).
      for (const context of rotate ? [contexts[round++ % contexts.length]] : contexts) {
        const recordedConv = conversation(it.domain, it.lang, context, from);
        let api = apis[turn++ % apis.length];
        if (!fits(api, recordedConv)) api = apis[turn++ % apis.length];
        if (!fits(api, recordedConv)) continue;
        const pair = {
          family,
          side,
          lang: it.lang,
          api,
          context,
          note: it.note || `${from.slice(0, 40)} / ${to.slice(0, 40)}`,
          recorded: request(api, recordedConv),
          incoming: request(api, conversation(it.domain, it.lang, context, to)),
        };
        // A harmless rewording's adversarial twin sits on the tape too: the rewording must be served its own recording.
        if (it.decoy !== undefined) pair.decoys = [request(api, conversation(it.domain, it.lang, context, it.decoy))];
        out.push(pair);
      }
    }
  }
  return out;
}

/** Pairs from whole conversations (history, tool results): both directions, the APIs that can carry them, in turn. */
export function conversationPairs(family, side, items, { apis = APIS.filter((a) => a !== 'mcp'), params } = {}) {
  const out = [];
  let turn = 0;
  for (const it of items) {
    for (const [from, to] of [
      [it.a, it.b],
      [it.b, it.a],
    ]) {
      for (let k = 0; k < (it.repeat ?? 2); k++) {
        const api = apis[turn++ % apis.length];
        out.push({
          family,
          side,
          lang: it.lang,
          api,
          context: 'conversation',
          note: it.note,
          recorded: request(api, from, params),
          incoming: request(api, to, params),
        });
      }
    }
  }
  return out;
}

/** A small seeded generator (mulberry32): the set never depends on the clock or on Math.random. */
export function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
