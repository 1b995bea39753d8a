// How a pair's texts become requests: one conversation shape, written out for each API tapedeck replays (OpenAI chat
// completions and Responses, Anthropic messages, Gemini, an MCP tools/call). Plain data, no tapedeck imports: the
// set is built from the families' definitions alone.

export const APIS = ['openai', 'anthropic', 'gemini', 'responses', 'mcp'];

const WHERE = {
  openai: { route: '/openai', path: '/v1/chat/completions' },
  responses: { route: '/openai', path: '/v1/responses' },
  anthropic: { route: '/anthropic', path: '/v1/messages' },
  gemini: { route: '/gemini', path: '/v1beta/models/gemini-2.0-flash:generateContent' },
  mcp: { route: '/mcp', path: '/' },
};

export const SYSTEM = {
  support: 'You are the support assistant of Acme Cloud. Be precise, cite the help-center article, never invent account data.',
  finance: 'You are a finance analyst assistant. Answer with figures from the provided data only and state your assumptions.',
  travel: 'You are a travel agent assistant. Confirm dates, cities and passengers back to the traveller before booking anything.',
  coding: 'You are a senior software engineer. Answer with working code and explain the important lines.',
  medicine: 'You are a clinical information assistant for nurses. Be accurate and conservative, and recommend a clinician when unsure.',
  law: 'You are a legal research assistant. Quote the clause you rely on and flag anything that needs a lawyer.',
  retail: 'You are the shopping assistant of an online store. Use the catalogue and the order system, never guess prices.',
  hr: 'You are the HR assistant of a mid-sized company. Follow the employee handbook and keep personal data private.',
};

/** A short sentence after the request, per language: the same in both texts of a pair. */
export const SUFFIX = {
  en: 'Keep the answer short.',
  de: 'Bitte antworte kurz.',
  fr: 'Réponds brièvement.',
  es: 'Responde brevemente.',
  it: 'Rispondi in breve.',
  pt: 'Responda de forma breve.',
  nl: 'Antwoord kort.',
  pl: 'Odpowiedz krótko.',
  ja: '簡潔に答えてください。',
  zh: '请简短回答。',
  ko: '짧게 대답해 주세요.',
};

/** An earlier exchange, the same in both texts of a pair, for the multi-turn context. */
export const HISTORY = {
  en: ['Hi, I have a question about my work.', 'Of course. What would you like to know?'],
  de: ['Hallo, ich habe eine Frage zu meiner Arbeit.', 'Gern. Was möchtest du wissen?'],
  fr: ["Bonjour, j'ai une question sur mon travail.", 'Bien sûr. Que voulez-vous savoir ?'],
  es: ['Hola, tengo una pregunta sobre mi trabajo.', 'Claro. ¿Qué quieres saber?'],
  it: ['Ciao, ho una domanda sul mio lavoro.', 'Certo. Cosa vuoi sapere?'],
  pt: ['Olá, tenho uma pergunta sobre o meu trabalho.', 'Claro. O que você quer saber?'],
  nl: ['Hallo, ik heb een vraag over mijn werk.', 'Natuurlijk. Wat wil je weten?'],
  pl: ['Cześć, mam pytanie dotyczące mojej pracy.', 'Oczywiście. Co chcesz wiedzieć?'],
  ja: ['こんにちは、仕事について質問があります。', 'もちろんです。何を知りたいですか？'],
  zh: ['你好，我有一个关于工作的问题。', '当然。你想知道什么？'],
  ko: ['안녕하세요, 일에 관해 질문이 있어요.', '물론이죠. 무엇이 궁금하세요?'],
};

/**
 * The ways one request text is asked: alone under a system prompt, with a closing sentence, or as the last turn of a
 * conversation. Both texts of a pair are asked the same way.
 */
export const CONTEXTS = ['plain', 'suffix', 'history'];

/** A conversation: a system prompt and turns (user / assistant text, an assistant's tool call, a tool's result). */
export function conversation(domain, lang, context, text) {
  const turns = [];
  if (context === 'history') {
    const [q, a] = HISTORY[lang] ?? HISTORY.en;
    turns.push({ role: 'user', text: q }, { role: 'assistant', text: a });
  }
  turns.push({ role: 'user', text: context === 'suffix' ? `${text} ${SUFFIX[lang] ?? SUFFIX.en}` : text });
  return { system: SYSTEM[domain] ?? SYSTEM.support, turns };
}

/** The request a conversation is, for one API: `{route, path, body}` as a tape records it. */
export function request(api, conv, params = {}) {
  const where = WHERE[api];
  const body = BODIES[api](conv, params);
  return { route: where.route, path: where.path, body };
}

const BODIES = {
  openai: (c, p) => ({
    model: 'gpt-4o',
    temperature: 0,
    ...p,
    messages: [
      ...(c.system ? [{ role: 'system', content: c.system }] : []),
      ...c.turns.flatMap((t, i) => {
        if (t.role === 'user' || (t.role === 'assistant' && t.text !== undefined)) return [{ role: t.role, content: t.text }];
        if (t.role === 'assistant')
          return [
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: t.id ?? `call_${i}`, type: 'function', function: { name: t.call.name, arguments: JSON.stringify(t.call.args) } },
              ],
            },
          ];
        return [{ role: 'tool', tool_call_id: t.id ?? `call_${i - 1}`, content: resultText(t.result) }];
      }),
    ],
  }),
  responses: (c, p) => ({
    model: 'gpt-4.1',
    temperature: 0,
    ...p,
    ...(c.system ? { instructions: c.system } : {}),
    input: c.turns.map((t, i) => {
      if (t.role === 'user' || (t.role === 'assistant' && t.text !== undefined)) return { role: t.role, content: t.text };
      if (t.role === 'assistant')
        return { type: 'function_call', call_id: t.id ?? `call_${i}`, name: t.call.name, arguments: JSON.stringify(t.call.args) };
      return { type: 'function_call_output', call_id: t.id ?? `call_${i - 1}`, output: resultText(t.result) };
    }),
  }),
  anthropic: (c, p) => ({
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    ...p,
    ...(c.system ? { system: c.system } : {}),
    messages: c.turns.map((t, i) => {
      if (t.role === 'user' || (t.role === 'assistant' && t.text !== undefined)) return { role: t.role, content: t.text };
      if (t.role === 'assistant')
        return { role: 'assistant', content: [{ type: 'tool_use', id: t.id ?? `toolu_${i}`, name: t.call.name, input: t.call.args }] };
      return { role: 'user', content: [{ type: 'tool_result', tool_use_id: t.id ?? `toolu_${i - 1}`, content: resultText(t.result) }] };
    }),
  }),
  gemini: (c, p) => ({
    ...(c.system ? { systemInstruction: { parts: [{ text: c.system }] } } : {}),
    generationConfig: { temperature: 0, ...p },
    contents: c.turns.map((t) => {
      if (t.role === 'user') return { role: 'user', parts: [{ text: t.text }] };
      if (t.role === 'assistant' && t.text !== undefined) return { role: 'model', parts: [{ text: t.text }] };
      if (t.role === 'assistant') return { role: 'model', parts: [{ functionCall: { name: t.call.name, args: t.call.args } }] };
      return {
        role: 'user',
        parts: [{ functionResponse: { name: t.name, response: typeof t.result === 'string' ? { text: t.result } : t.result } }],
      };
    }),
  }),
  // MCP: the last user text is a tool's argument (the conversation around it is the agent's, not the server's).
  mcp: (c, p) => ({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'ask_knowledge_base', arguments: { question: c.turns.at(-1).text, ...p } },
  }),
};

function resultText(result) {
  return typeof result === 'string' ? result : JSON.stringify(result);
}

/** Whether a conversation can be written for an API (MCP carries one question, no turns or tool calls). */
export function fits(api, conv) {
  return api !== 'mcp' || (conv.turns.length === 1 && conv.turns[0].role === 'user');
}
