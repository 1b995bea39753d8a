// The examples kit's MCP server, built on the MCP SDK: four tools, read-only and side effects, annotated and not,
// so every side-effect rule of docs/side-effects.md has something to act on.
//
//   get_forecast   read-only     annotated readOnlyHint: true
//   search_notes   read-only     no annotations (tapedeck cannot tell it is safe until a person says so)
//   send_email     side effect   annotated readOnlyHint: false, destructiveHint: false (it adds, it never deletes)
//   book_table     side effect   no annotations
//
//   node examples/mcp-server.mjs                      over stdio (for tapedeck mcp-stdio, or any MCP client)
//   node examples/mcp-server.mjs --http [--port 8902] over Streamable HTTP at http://127.0.0.1:8902/mcp
//
// Each side effect is logged on stderr (`[kit-mcp] sent email to ...`), so a run that really sent one shows it.
// Over HTTP it stops on Ctrl-C and when the shell that started it ends.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { stopWithParent } from './lib/lifetime.mjs';

const { values } = parseArgs({
  options: { http: { type: 'boolean' }, port: { type: 'string', default: '8902' }, 'watch-pid': { type: 'string' } },
});
const log = (line) => process.stderr.write(`[kit-mcp] ${line}\n`);

/** The same weather for the same city and day, every run. */
function forecast(city, day) {
  const skies = ['sunny', 'light rain', 'cloudy', 'windy', 'clear'];
  let h = 0;
  for (const c of `${city.toLowerCase()}|${day}`) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `${skies[h % skies.length]}, ${14 + (h % 15)}°C`;
}

const NOTES = [
  'Lisbon trip: flight TP1351 lands Friday 10:40; dinner with Ana on Saturday.',
  'Porto: send the slides to Rui before the meetup.',
  'Groceries: coffee, oranges, bread.',
];

function kitServer() {
  const server = new McpServer({ name: 'tapedeck-examples-kit', version: '1.0.0' });
  const text = (t) => ({ content: [{ type: 'text', text: t }] });
  server.registerTool(
    'get_forecast',
    {
      title: 'Weather forecast',
      description: 'The weather forecast for a city, today or tomorrow.',
      inputSchema: { city: z.string(), day: z.enum(['today', 'tomorrow']).default('today') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ city, day }) => text(forecast(city, day)),
  );
  server.registerTool(
    'search_notes',
    { description: "Find the user's notes that mention a word of the query.", inputSchema: { query: z.string() } },
    async ({ query }) => {
      const words = query
        .toLowerCase()
        .split(/\W+/)
        .filter((w) => w.length > 2);
      const hits = NOTES.filter((n) => words.some((w) => n.toLowerCase().includes(w)));
      return text(hits.length > 0 ? hits.join('\n') : 'no notes found');
    },
  );
  server.registerTool(
    'send_email',
    {
      description: 'Send an email.',
      inputSchema: { to: z.string(), subject: z.string(), body: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    async ({ to, subject }) => {
      log(`sent email to ${to}: ${subject}`);
      return text(`sent to ${to}`);
    },
  );
  server.registerTool(
    'book_table',
    { description: 'Book a restaurant table.', inputSchema: { restaurant: z.string(), time: z.string(), people: z.number() } },
    async ({ restaurant, time, people }) => {
      log(`booked ${restaurant} at ${time} for ${people}`);
      return text(`booked ${restaurant} at ${time} for ${people}`);
    },
  );
  return server;
}

if (!values.http) {
  await kitServer().connect(new StdioServerTransport());
} else {
  // Streamable HTTP with sessions: one transport (and server) per session, found by its Mcp-Session-Id.
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name: 'tapedeck examples kit MCP server', pid: process.pid, endpoint: '/mcp' }));
      return;
    }
    if (path !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('the MCP endpoint is /mcp\n');
      return;
    }
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (transport === undefined) {
      if (typeof id === 'string') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await kitServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  http.on('error', (err) => {
    process.stderr.write(
      `examples/mcp-server.mjs: ${err.code === 'EADDRINUSE' ? `port ${values.port} is in use (--port N picks another)` : err.message}\n`,
    );
    process.exit(1);
  });
  http.listen(Number(values.port), '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${http.address().port}/mcp (the examples kit's MCP server, pid ${process.pid})\n`);
  });
  stopWithParent(
    () =>
      new Promise((resolve) => {
        for (const t of sessions.values()) void t.close();
        http.closeAllConnections();
        http.close(() => resolve());
      }),
    Number(values['watch-pid'] ?? 0),
  );
}
