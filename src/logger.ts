/**
 * JSON logging with pino. Secrets are redacted by path wherever they could appear
 * (API keys, access tokens, webhook signatures, authorization headers): keys are never logged.
 */
import pino, { type Logger } from 'pino';
import type { Config } from './config';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  'headers["x-api-key"]',
  '*.access_token',
  '*.apiKey',
  '*.key',
  '*.secret',
  'access_token',
  'apiKey',
];

/**
 * The process logger; request handlers use `child({ reqId })` of it. `destination` defaults to
 * stdout (tests pass a stream to read the lines back).
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level: config.LOG_LEVEL,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}
