import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { readableStream } from '../src/logger.js';

/** The development profile is refused wherever it could be mistaken for a deployment (issue 30, item 1). */

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('DEV_MODE at start', () => {
  for (const baseUrl of ['https://tasks.example.org', 'http://192.168.1.10:8080', 'http://localhost.evil.example', 'http://10.0.0.1']) {
    it(`is refused with BASE_URL ${baseUrl}, naming DEV_MODE`, () => {
      const error = refusal({ DEV_MODE: 'true', BASE_URL: baseUrl });
      expect(error.variable).toBe('DEV_MODE');
      expect(error.message).toContain('loopback');
    });
  }

  for (const baseUrl of ['http://localhost:8080', 'http://127.0.0.1:9000', 'http://[::1]:8080', 'http://app.localhost:8080']) {
    it(`is accepted with BASE_URL ${baseUrl}`, () => {
      expect(loadConfig({ DEV_MODE: 'true', BASE_URL: baseUrl }).dev.enabled).toBe(true);
    });
  }

  it('is accepted with no BASE_URL (the default is http://localhost:PORT)', () => {
    expect(loadConfig({ DEV_MODE: 'true' }).dev.enabled).toBe(true);
  });

  it('refuses DEV_AUTO_OPERATOR without DEV_MODE, and an unknown mode', () => {
    expect(refusal({ DEV_AUTO_OPERATOR: 'deliver' }).variable).toBe('DEV_AUTO_OPERATOR');
    expect(refusal({ DEV_MODE: 'true', DEV_AUTO_OPERATOR: 'approve' }).message).toContain('accept, deliver, reject, ask');
  });

  it('keeps a limit set explicitly, and the contract limits without DEV_MODE', () => {
    expect(loadConfig({ DEV_MODE: 'true', TASK_LIMIT_PER_HOUR: '2' }).limits.tasksPerHour).toBe(2);
    expect(loadConfig({ DEV_MODE: 'true' }).limits.statusPollPerDay).toBeGreaterThan(1000);
    expect(loadConfig({}).limits.statusPollPerDay).toBe(1);
  });
});

describe('DEV_MODE and the listen address', () => {
  it('binds loopback when HOST is not set (every loopback address: localhost), and every interface without DEV_MODE', () => {
    expect(loadConfig({ DEV_MODE: 'true' }).host).toBe('localhost');
    expect(loadConfig({}).host).toBe('0.0.0.0');
  });

  for (const host of ['127.0.0.1', '::1', '[::1]', 'localhost']) {
    it(`accepts the loopback HOST ${host}`, () => {
      expect(loadConfig({ DEV_MODE: 'true', HOST: host }).host).toBe(host.replace(/^\[(.*)\]$/, '$1'));
    });
  }

  for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.org', '10.0.0.1']) {
    it(`refuses the non-loopback HOST ${host}, naming HOST and DEV_MODE`, () => {
      const error = refusal({ DEV_MODE: 'true', HOST: host });
      expect(error.variable).toBe('HOST');
      expect(error.message).toContain('DEV_MODE');
      expect(error.message).toContain('loopback');
    });
  }
});

describe('DEV_MODE on duplicates and loopback webhooks', () => {
  it('turns duplicate detection off and allows loopback callbacks unless set explicitly; production keeps both', () => {
    expect(loadConfig({ DEV_MODE: 'true' }).limits.duplicateWindowHours).toBe(0);
    expect(loadConfig({ DEV_MODE: 'true' }).webhooks.allowPrivate).toBe(true);
    expect(loadConfig({ DEV_MODE: 'true', DUPLICATE_WINDOW_HOURS: '24', WEBHOOK_ALLOW_PRIVATE: 'false' }).limits.duplicateWindowHours).toBe(24);
    expect(loadConfig({ DEV_MODE: 'true', WEBHOOK_ALLOW_PRIVATE: 'false' }).webhooks.allowPrivate).toBe(false);
    expect(loadConfig({}).limits.duplicateWindowHours).toBe(24);
    expect(loadConfig({}).webhooks.allowPrivate).toBe(false);
  });
});

describe('readable logs', () => {
  it('turns a JSON record into one line a person reads, and passes other text through', () => {
    const lines: string[] = [];
    const stream = readableStream({ write: (text: string) => lines.push(text) });
    stream.write(
      `${JSON.stringify({ level: 30, time: Date.parse('2026-11-24T10:11:12Z'), msg: 'request completed', req: { method: 'GET', url: '/api/v1/health' }, res: { statusCode: 200 }, responseTime: 1.234, reqId: 'r1' })}\n`,
    );
    stream.write(`${JSON.stringify({ level: 40, time: 0, msg: 'dev auto-operator moved a task', task_id: 'task-1', err: { message: 'boom' } })}\n`);
    stream.write('not json\n');
    expect(lines[0]).toBe('10:11:12 INFO  request completed GET /api/v1/health → 200 in 1.2 ms\n');
    expect(lines[1]).toBe('00:00:00 WARN  dev auto-operator moved a task task_id=task-1 err=boom\n');
    expect(lines[2]).toBe('not json\n');
  });
});
