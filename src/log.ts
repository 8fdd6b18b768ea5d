// One pino logger for servers and long operations. Pretty on a terminal, JSON otherwise.

import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(name: string, level = process.env['BUILDSCOPE_LOG_LEVEL'] ?? 'info'): Logger {
  const pretty = process.stderr.isTTY && process.env['NODE_ENV'] !== 'production';
  return pino(
    { name, level },
    pretty ? pino.transport({ target: 'pino-pretty', options: { destination: 2, translateTime: 'SYS:HH:MM:ss' } }) : pino.destination(2),
  );
}
