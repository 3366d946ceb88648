/** Structured logs (pino). Secrets never reach a log line: known secret fields are redacted. */
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-admin-key"]',
  'req.headers.payment',
  'req.headers.cookie',
  'secret',
  '*.secret',
  'tokensApiKey',
  '*.tokensApiKey',
  'adminApiKey',
  '*.adminApiKey',
  'encryptionKey',
  '*.encryptionKey',
];

export function createLogger(level: string, name: string): Logger {
  return pino({ level, name, redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
}
