/** Reading untyped JSON safely: what every adapter needs to look at a body it does not control. */
import type { Json } from './types.js';
import { parseJson } from '../tape/json-depth.js';

export const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Tool arguments given as a JSON string, parsed; anything else as it is. */
export function parseArgs(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return parseJson(v) as unknown;
  } catch {
    return v;
  }
}

/** Plain text of a message content: a string, or the text of its text parts (`text`, `input_text`, `output_text`). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') out.push(part);
    else if (
      isObj(part) &&
      typeof part.text === 'string' &&
      (part.type === undefined || part.type === 'text' || part.type === 'input_text' || part.type === 'output_text')
    )
      out.push(part.text);
  }
  return out.join('\n');
}
