import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Dependencies point one way: cli -> experiment / drift -> run / serve -> front -> transports -> upstream -> http ->
 * engine -> replay -> providers -> tape, with inspect beside the proxy's folders (config sits beside providers,
 * errors/log/version below everything). A folder may import its own layer and the layers under it, never one above
 * or a peer. `layer(files, forbidden)` fails the lint on an import of a forbidden folder, type imports included.
 *
 * The proxy's folders, by job: engine (the call, its answer, the one record builder, the exchange log, faults),
 * http (the request and the response sink), upstream (live answers), transports (HTTP, MCP, stdio, WebSocket),
 * front (the listener, routes, the forward proxy and CA, the server), run (wrapper mode, sandbox), serve (per test).
 */
const PROXY = ['engine', 'http', 'upstream', 'transports', 'front', 'run', 'serve'];
const ABOVE_TAPE = ['providers', 'config', 'replay', ...PROXY, 'inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo'];
const above = (...layers) => layers;
const layer = (files, forbidden) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: forbidden.map((dir) => ({
          regex: `(^|/)${dir}/`,
          message: `layering: ${files.join(', ')} must not import ${dir}/ (cli -> proxy / inspect -> replay -> providers -> tape)`,
        })),
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'tapes/', 'coverage/', '.test-build-*/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        AbortController: 'readonly',
        fetch: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        Headers: 'readonly',
        ReadableStream: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  { files: ['eslint.config.js', 'vitest.config.ts', 'test/**/vitest.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  // A function a reader can hold in their head: past ~120 lines, split it into named steps (tests are exempt: a
  // describe block is a list, not a function to follow).
  { files: ['src/**/*.ts'], rules: { 'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }] } },
  layer(['src/errors.ts', 'src/log.ts', 'src/version.ts', 'src/shipped.ts', 'src/edit-distance.ts'], ['tape', ...ABOVE_TAPE]),
  layer(['src/tape/**'], ABOVE_TAPE),
  layer(['src/providers/**'], ['config', 'replay', ...PROXY, 'inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo']),
  layer(['src/config/**'], ['providers', 'replay', ...PROXY, 'inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo']),
  layer(['src/replay/**'], [...PROXY, 'inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo']),
  // The exchange engine: what every transport's calls go through (the call, its answer, the one record builder).
  layer(
    ['src/engine/**'],
    [
      ...above('http', 'upstream', 'transports', 'front', 'run', 'serve'),
      'inspect',
      'view',
      'export',
      'experiment',
      'drift',
      'cli',
      'demo',
    ],
  ),
  layer(
    ['src/http/**'],
    [...above('upstream', 'transports', 'front', 'run', 'serve'), 'inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo'],
  ),
  layer(
    ['src/upstream/**'],
    [...above('transports', 'front', 'run', 'serve'), 'inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo'],
  ),
  layer(['src/transports/**'], [...above('front', 'run', 'serve'), 'inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo']),
  layer(['src/front/**'], [...above('run', 'serve'), 'inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo']),
  layer(['src/run/**', 'src/serve/**'], ['inspect', 'view', 'export', 'experiment', 'drift', 'cli', 'demo']),
  layer(['src/inspect/**'], [...PROXY, 'view', 'export', 'experiment', 'drift', 'cli', 'demo']),
  layer(['src/view/**', 'src/export/**'], [...PROXY, 'experiment', 'drift', 'cli', 'demo']),
  // experiment runs agents under replay and diffs the runs: above proxy and inspect, below cli.
  layer(['src/experiment/**'], ['view', 'export', 'drift', 'cli', 'demo']),
  // drift sends a tape's calls again (proxy's forwarding) and compares the answers: above proxy and inspect, below cli.
  layer(['src/drift/**'], ['view', 'export', 'experiment', 'cli', 'demo']),
);
