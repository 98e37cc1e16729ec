import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQLite } from '../src/store/sqlite-driver.js';
import { postJson, RELAXED_LIMITS, TEST_ADMIN_KEY, validTask } from './support/app.js';
import { freePort, waitForServer } from './support/net.js';
import { startSmtpServer, type TestSmtpServer, waitUntil } from './support/smtp.js';

/**
 * A worker killed mid-send (issue 15, defect 7): the real entry point is SIGKILLed while its mail
 * sits in the SMTP DATA phase; a second instance on the same store sends that mail within 10 s
 * (a short lease kept alive by a heartbeat while sending, instead of a 120 s lease).
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const OPERATOR = 'operator@ops.example-service.dev';

function start(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['dist/server.mjs'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DNS_SERVERS: '127.0.0.1:9', DNS_TIMEOUT_MS: '200', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('a worker killed in the middle of a send', () => {
  let smtp: TestSmtpServer;
  let dataDir: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
    smtp = await startSmtpServer();
    dataDir = mkdtempSync(path.join(tmpdir(), 'hts-crash-'));
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await smtp.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves the mail to another instance, which sends it within 10 s', async () => {
    const env = async () => {
      const port = await freePort();
      return {
        port,
        vars: {
          ...RELAXED_LIMITS,
          PORT: String(port),
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          ADMIN_KEY: TEST_ADMIN_KEY,
          SMTP_URL: smtp.url,
          OPERATOR_EMAIL: OPERATOR,
          MAIL_POLL_MS: '100',
        },
      };
    };
    smtp.setDataDelay(30_000);
    const first = await env();
    const a = start(first.vars);
    children.push(a);
    await waitForServer(`http://127.0.0.1:${first.port}/api/v1/health`);
    const submitted = await postJson(`http://127.0.0.1:${first.port}/api/v1/tasks`, validTask());
    expect(submitted.status).toBe(202);
    // Wait until the mail is claimed and its message has reached the SMTP server's DATA phase.
    const db = new SQLite(path.join(dataDir, 'service.db'), { readonly: true });
    try {
      await waitUntil(
        () => (db.prepare("select count(*) as n from outbox where locked_until is not null and status = 'pending'").get() as { n: number }).n === 1,
        10_000,
        'the claim',
      );
    } finally {
      db.close();
    }
    await waitUntil(() => smtp.dataStarted > 0, 10_000, 'the message at the SMTP server');
    a.kill('SIGKILL');
    await new Promise((resolve) => a.once('exit', resolve));
    const killedAt = Date.now();

    smtp.setDataDelay(0);
    const second = await env();
    children.push(start(second.vars));
    await smtp.waitFor(1, (mail) => mail.to === OPERATOR, 15_000);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
  });
});
