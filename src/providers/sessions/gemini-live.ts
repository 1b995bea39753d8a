/**
 * Gemini Live (`BidiGenerateContent` over `wss://generativelanguage.googleapis.com/ws/...`, `ai.live.connect()` in
 * `@google/genai` and `google-genai`): the first client message is `setup` (model, systemInstruction, tools,
 * generationConfig); then `clientContent` turns, `realtimeInput` (audio, video, text) and `toolResponse`. The server
 * answers `setupComplete`, then per model turn `serverContent` (parts, transcriptions, `turnComplete`) or `toolCall`,
 * with `usageMetadata` beside them. The API has no error message: errors close the session with a reason.
 */
import { frameJson } from '../../tape/frame.js';
import type { LlmMeaning, WsFrame } from '../../tape/schema.js';
import { finishTool, newAnswer } from '../answer.js';
import { gemini, GEMINI, GEMINI_OTEL_PARAMS, geminiUsage } from '../gemini.js';
import { isObj, num, str } from '../json.js';
import type { Answer, Json, PendingTool, ProviderAdapter, Rewritten, SessionReader, SessionResponse } from '../types.js';

const session: SessionReader = {
  detect: (target) => (target.method === 'GET' && /BidiGenerateContent(Constrained)?$/.test(target.path) ? 'gemini' : undefined),
  idKeys: ['id'],

  overrideMessage(json, o) {
    const applied: Rewritten['applied'] = {};
    if (!isObj(json.setup)) return { json, applied };
    const setup: Json = { ...json.setup };
    if (o.model !== undefined) {
      const to = o.model.startsWith('models/') || o.model.includes('/') ? o.model : `models/${o.model}`;
      if (setup.model !== to) applied.model = { from: setup.model, to };
      setup.model = to;
    }
    if (o.systemPrompt !== undefined) {
      applied.systemInstruction = { from: setup.systemInstruction, to: o.systemPrompt };
      setup.systemInstruction = { parts: [{ text: o.systemPrompt }] };
    }
    if (o.temperature !== undefined || o.maxTokens !== undefined) {
      const gc: Json = isObj(setup.generationConfig) ? { ...setup.generationConfig } : {};
      const set = (key: string, to: unknown): void => {
        if (gc[key] !== to) applied[key] = { from: gc[key], to };
        gc[key] = to;
      };
      if (o.temperature !== undefined) set('temperature', o.temperature);
      if (o.maxTokens !== undefined) set('maxOutputTokens', o.maxTokens);
      setup.generationConfig = gc;
    }
    return { json: { ...json, setup }, applied };
  },

  responses(provider, _request, frames) {
    return readSession(provider, frames);
  },
};

interface Open {
  startMs: number;
  lastMs: number;
  body: Json;
  answer: Answer;
  /** Transcription of audio output, used when the turn has no text parts. */
  transcript: string;
}

function readSession(provider: string, frames: readonly WsFrame[]): SessionResponse[] {
  const out: SessionResponse[] = [];
  let setup: Json = {};
  const contents: Json[] = [];
  let asked: number | undefined;
  let open: Open | undefined;
  const model = (): string | undefined => str(setup.model)?.replace(/^models\//, '');

  const finish = (complete: boolean): void => {
    if (open === undefined) return;
    const a = open.answer;
    const text = a.text !== '' ? a.text : open.transcript;
    const m = model();
    const llm: LlmMeaning = {
      provider,
      api: 'live',
      ...(m !== undefined ? { model: m } : {}),
      params: isObj(setup.generationConfig) ? { ...setup.generationConfig } : {},
      streamed: true,
      ...(a.usage ? { usage: a.usage } : {}),
      toolCalls: a.tools.filter((t): t is PendingTool => t !== undefined).map(finishTool),
      ...(text !== '' ? { outputText: text } : {}),
      ...(a.thinking !== '' ? { thinking: a.thinking } : {}),
      ...(a.stop ? { stopReason: a.stop } : {}),
    };
    const parts: Json[] = [];
    if (text !== '') parts.push({ text });
    for (const t of llm.toolCalls) parts.push({ functionCall: { ...(t.id ? { id: t.id } : {}), name: t.name, args: t.arguments } });
    if (parts.length > 0) contents.push({ role: 'model', parts });
    out.push({ startMs: open.startMs, endMs: open.lastMs, body: open.body, llm, complete });
    open = undefined;
  };
  const begin = (at: number): Open => {
    open ??= {
      startMs: asked ?? at,
      lastMs: at,
      answer: newAnswer(),
      transcript: '',
      body: {
        ...(setup.model !== undefined ? { model: setup.model } : {}),
        ...(setup.systemInstruction !== undefined ? { systemInstruction: setup.systemInstruction } : {}),
        ...(setup.tools !== undefined ? { tools: setup.tools } : {}),
        ...(setup.generationConfig !== undefined ? { generationConfig: setup.generationConfig } : {}),
        contents: [...contents],
      },
    };
    asked = undefined;
    return open;
  };

  for (const f of frames) {
    const msg = frameJson(f);
    if (!isObj(msg)) continue;
    if (f.from === 'client') {
      if (isObj(msg.setup)) setup = msg.setup;
      else if (isObj(msg.clientContent)) {
        for (const turn of Array.isArray(msg.clientContent.turns) ? msg.clientContent.turns : []) if (isObj(turn)) contents.push(turn);
        asked ??= f.offsetMs;
      } else if (isObj(msg.toolResponse)) {
        const responses = Array.isArray(msg.toolResponse.functionResponses) ? msg.toolResponse.functionResponses : [];
        contents.push({ role: 'user', parts: responses.filter(isObj).map((r) => ({ functionResponse: r })) });
        asked ??= f.offsetMs;
      } else if (isObj(msg.realtimeInput)) asked ??= f.offsetMs;
      continue;
    }
    const content = isObj(msg.serverContent) ? msg.serverContent : undefined;
    if (content !== undefined) {
      if (isObj(content.inputTranscription) && typeof content.inputTranscription.text === 'string' && open === undefined)
        contents.push({ role: 'user', parts: [{ text: content.inputTranscription.text }] });
      const turn = isObj(content.modelTurn) && Array.isArray(content.modelTurn.parts) ? content.modelTurn.parts : undefined;
      const transcript = isObj(content.outputTranscription) ? str(content.outputTranscription.text) : undefined;
      if (turn !== undefined || transcript !== undefined) {
        const o = begin(f.offsetMs);
        for (const p of turn ?? []) {
          if (!isObj(p) || typeof p.text !== 'string') continue;
          if (p.thought === true) o.answer.thinking += p.text;
          else o.answer.text += p.text;
        }
        if (transcript !== undefined) o.transcript += transcript;
      }
      if (open !== undefined) {
        open.lastMs = f.offsetMs;
        if (content.interrupted === true) open.answer.stop = 'interrupted';
      }
    }
    if (isObj(msg.usageMetadata) && open !== undefined) open.answer.usage = liveUsage(msg.usageMetadata);
    if (isObj(msg.toolCall)) {
      const o = begin(f.offsetMs);
      o.lastMs = f.offsetMs;
      for (const c of Array.isArray(msg.toolCall.functionCalls) ? msg.toolCall.functionCalls : [])
        if (isObj(c)) o.answer.tools.push({ id: str(c.id), name: str(c.name) ?? '', args: '', parsed: c.args ?? {} });
      // The model waits for the tool responses: its turn ends here.
      o.answer.stop ??= 'tool_call';
      finish(true);
    } else if (content?.turnComplete === true && open !== undefined) {
      open.answer.stop ??= 'turn_complete';
      finish(true);
    }
  }
  finish(false);
  return out;
}

/** Live reports the answer's tokens as `responseTokenCount`; generateContent as `candidatesTokenCount`. */
function liveUsage(u: Json): NonNullable<Answer['usage']> {
  const usage = geminiUsage(u);
  if (num(u.candidatesTokenCount) === undefined && num(u.responseTokenCount) !== undefined)
    usage.outputTokens = (num(u.responseTokenCount) ?? 0) + (num(u.thoughtsTokenCount) ?? 0);
  return usage;
}

/** Gemini Live in the provider registry: it claims no HTTP request; the model saw a generateContent-like request. */
export const geminiLive: ProviderAdapter = {
  api: 'live',
  provider: GEMINI,
  otelParams: GEMINI_OTEL_PARAMS,
  detect: () => undefined,
  describeRequest: (body) => ({ model: str(body.model)?.replace(/^models\//, ''), streamed: true }),
  describeBody: () => undefined,
  describeEvent: () => undefined,
  conversation: (body) => gemini.conversation(body),
  errorBody: gemini.errorBody,
  applyOverrides: (body, path) => ({ body, path, applied: {} }),
  session,
};
