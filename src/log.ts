import { pino, type Logger } from 'pino';

/**
 * Structured logs on stderr (stdout belongs to command output). Quiet by default: `warn`.
 * `TAPEDECK_LOG=info|debug` or `--verbose` turns them up. Secrets never reach a log: we log ids, routes,
 * paths and statuses, never headers or bodies, and pino's redact is a second net.
 */
export function createLogger(level: string = process.env.TAPEDECK_LOG ?? 'warn'): Logger {
  return pino(
    {
      name: 'tapedeck',
      level,
      redact: {
        paths: [
          'headers.authorization',
          'headers["x-api-key"]',
          'headers.cookie',
          '*.headers.authorization',
          '*.headers["x-api-key"]',
          '*.headers.cookie',
        ],
        censor: '[REDACTED]',
      },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}

export type { Logger };
