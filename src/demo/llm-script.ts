/**
 * What the scripted LLM answers (the demo's, the examples kit's and the benchmark's upstream): a small, fully
 * deterministic agent brain over OpenAI chat completions. Given the conversation and the tools offered it picks the
 * next tool call, one per turn, or writes the final answer. Its choices depend on the model asked, so an A/B run
 * has something to find:
 *
 * - a weather question: the forecast tool (`get_forecast` / `get_weather`), then, when the question asks for it,
 *   the email tool (`send_email`), then the answer;
 * - a large model (`gpt-4.1`, `gpt-5`, `o3`) first searches the user's notes (`search_notes`) and mentions them in
 *   the email and the answer; a small one (`...-mini`, `...-nano`) answers in fewer words; a system prompt that asks for terse (or brief, short) answers gets the small model's words;
 * - anything else: `You asked: "...". The answer is 42.`
 *
 * Tool-call turns carry the model's reasons as `<rationale call="N">{"why", "confidence", "alternatives"}</rationale>`
 * blocks and an assumption in prose (`I assume ... because ...`), which `tapedeck show --debrief` reads.
 */

export interface ChatMessage {
  role: string;
  content?: string | null | { type: string; text?: string }[];
  tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatRequest {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  messages?: ChatMessage[];
  tools?: { type: string; function: { name: string } }[];
}

export interface ScriptedTurn {
  /** The assistant's text: the answer, or what it says before its tool call (its rationale). */
  text: string | null;
  toolCalls: { id: string; name: string; arguments: Record<string, unknown> }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

type Size = 'large' | 'small' | 'default';

/** `gpt-4.1`, `gpt-5`, `o3` (and their dated snapshots) are large; any `mini` or `nano` is small. */
export function modelSize(model: string): Size {
  if (/mini|nano/i.test(model)) return 'small';
  if (/^(gpt-4\.1|gpt-5|o3)(-\d{4}-\d\d-\d\d)?$/i.test(model)) return 'large';
  return 'default';
}

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? '').join('');
  return '';
}

interface Situation {
  question: string;
  /** The system (or developer) prompt asks for few words. */
  terse: boolean;
  offered: string[];
  /** Tool name -> the text of its result, for every call answered so far. */
  results: Map<string, string>;
  turns: number;
}

function situation(req: ChatRequest): Situation {
  const messages = req.messages ?? [];
  const question = textOf(messages.find((m) => m.role === 'user')?.content);
  const names = new Map<string, string>();
  const results = new Map<string, string>();
  let turns = 0;
  for (const m of messages) {
    if (m.role === 'assistant') {
      turns++;
      for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
    }
    if (m.role === 'tool') results.set(names.get(m.tool_call_id ?? '') ?? m.tool_call_id ?? '?', textOf(m.content));
  }
  // The tools offered now, and those called before (a follow-up request may not offer them again).
  const offered = [...new Set([...(req.tools ?? []).map((t) => t.function.name), ...names.values()])];
  const system = textOf(messages.find((m) => m.role === 'system' || m.role === 'developer')?.content);
  return { question, terse: /\b(terse|brief|short)\b/i.test(system), offered, results, turns };
}

interface Ask {
  city: string;
  day: 'today' | 'tomorrow';
  to: string | undefined;
}

function asked(question: string): Ask | undefined {
  if (!/weather|forecast|rain|sunny/i.test(question)) return undefined;
  const city = /\bin ([A-Z][a-zA-Z]+)/.exec(question)?.[1] ?? 'Lisbon';
  const to = /\b(?:e-?mail|send)\b/i.test(question) ? (/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(question)?.[0] ?? 'me@example.com') : undefined;
  return { city, day: /tomorrow/i.test(question) ? 'tomorrow' : 'today', to };
}

/** A forecast tool's result as words: `{"forecast": "light rain"}` or plain text. */
function forecastWords(result: string): string {
  try {
    const parsed = JSON.parse(result) as { forecast?: unknown };
    if (typeof parsed.forecast === 'string') return parsed.forecast;
  } catch {
    // plain text
  }
  return result.replace(/\s+/g, ' ').trim();
}

const failed = (result: string | undefined): boolean => result !== undefined && /^(error|tool error)\b|blocked/i.test(result);

export function scriptedTurn(req: ChatRequest): ScriptedTurn {
  const model = req.model ?? 'demo-model';
  const size = modelSize(model);
  const s = situation(req);
  const ask = asked(s.question);
  const turn = (text: string | null, call?: { name: string; arguments: Record<string, unknown> }): ScriptedTurn => {
    const prompt = 10 + Math.round(JSON.stringify(req.messages ?? []).length / 8);
    const completion = (size === 'large' ? 20 : size === 'small' ? 8 : 12) + (call ? 6 : 0);
    return {
      text,
      toolCalls: call ? [{ id: `call_${call.name}_${s.turns + 1}`, ...call }] : [],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    };
  };
  if (ask === undefined) return turn(`You asked: "${s.question}". The answer is 42.`);

  const notesTool = s.offered.find((n) => /notes|search/i.test(n));
  const weatherTool = s.offered.find((n) => /forecast|weather/i.test(n));
  const emailTool = s.offered.find((n) => /mail/i.test(n));
  const notes = notesTool ? s.results.get(notesTool) : undefined;
  const forecast = weatherTool ? s.results.get(weatherTool) : undefined;

  if (size === 'large' && notesTool && notes === undefined)
    return turn(`<rationale>${JSON.stringify({ why: `the user's notes may say why ${ask.city} matters`, confidence: 0.6 })}</rationale>`, {
      name: notesTool,
      arguments: { query: `${ask.city} trip` },
    });
  if (weatherTool && forecast === undefined) {
    const rationale = {
      why: `a forecast for ${ask.city} needs live data`,
      confidence: 0.9,
      refs: ['user:question'],
      alternatives: [{ option: 'answer from memory', rejectedBecause: 'the weather changes every day' }],
    };
    return turn(
      `<rationale call="1">${JSON.stringify(rationale)}</rationale> I assume the user means ${ask.day} in ${ask.city} because the question names no other place.`,
      { name: weatherTool, arguments: weatherTool === 'get_weather' ? { city: ask.city } : { city: ask.city, day: ask.day } },
    );
  }
  const words = forecast === undefined ? 'unknown' : forecastWords(forecast);
  const extra = size === 'large' && notes !== undefined && !failed(notes) ? ` Your notes: ${notes.replace(/\s+/g, ' ').trim()}` : '';
  const email = emailTool ? s.results.get(emailTool) : undefined;
  if (ask.to !== undefined && emailTool && email === undefined && !failed(forecast))
    return turn(
      `<rationale call="1">${JSON.stringify({ why: `the user asked for the forecast by email at ${ask.to}`, confidence: 0.95 })}</rationale>`,
      {
        name: emailTool,
        arguments: { to: ask.to, subject: `Weather in ${ask.city} ${ask.day}`, body: `${ask.city} ${ask.day}: ${words}.${extra}` },
      },
    );

  const Day = ask.day === 'today' ? 'Today' : 'Tomorrow';
  if (failed(forecast)) return turn(`I could not get the forecast for ${ask.city}: ${forecast}`);
  let answer =
    size === 'small' || s.terse
      ? `${ask.city} ${ask.day}: ${words}.`
      : `${Day} in ${ask.city}: ${words}.${/rain/i.test(words) ? ' Pack an umbrella.' : ''}${extra}`;
  if (email !== undefined) answer += failed(email) ? ` I could not send the email: ${email}` : ` I emailed it to ${ask.to}.`;
  return turn(answer);
}
