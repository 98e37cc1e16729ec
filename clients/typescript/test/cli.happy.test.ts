import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { patchOk } from '../../../test/operator.support.js';
import { useTestApp, validTask } from '../../../test/support/app.js';
import { htask, startHtask } from './cli.support.js';

/** htask as a process against the real app: submit → the operator delivers → wait → verify. */

describe('htask', () => {
  const t = useTestApp();

  it('submit → operator delivers → wait exits 0 → verify exits 0', async () => {
    const submitted = await htask(
      [
        '--json',
        'submit',
        '--task-type',
        'real_world_verification',
        '--description',
        String(validTask().description),
        '--location-required',
        '--location-detail',
        'Springfield',
        '--contact-email',
        'agent@mail.example-agent.dev',
      ],
      { baseUrl: t.url },
    );
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    const body = JSON.parse(submitted.stdout) as { task_id: string; status: string; idempotency_key: string };
    expect(body.status).toBe('submitted');
    expect(body.idempotency_key).toBeTruthy();
    const id = body.task_id;

    const waiting = startHtask(['wait', id, '--timeout', '90'], { baseUrl: t.url });
    await waiting.stderrContains(`${id}: submitted`);
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-11T12:00:00.000Z' });
    await waiting.stderrContains(`${id}: accepted`);
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Open Sundays 8:00-12:00.' });
    const waited = await waiting.done;
    expect(waited.code).toBe(0);
    expect(waited.stdout).toContain(`${id}: delivered`);
    expect(waited.stdout).toContain('Open Sundays 8:00-12:00.');
    // The progress line: status, ETA, elapsed.
    expect(waited.stderr).toMatch(new RegExp(`${id}: submitted, waited \\d+s`));
    expect(waited.stderr).toMatch(/accepted, ETA 2030-03-11T12:00:00.000Z, waited \d+s/);

    const verified = await htask(['verify', id, '--issuer', t.config.baseUrl], { baseUrl: t.url });
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/✓ signature/);
    expect(verified.stdout).toMatch(/✓ deliverable/);
    expect(verified.stdout).toContain(`VALID: signed by ${t.config.baseUrl}`);

    const status = await htask(['status', id, '--json', '--base-url', t.url]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ task_id: id, status: 'delivered' });
  });

  it('submits a JSON task from stdin, with a given Idempotency-Key replaying the same task', async () => {
    const task = JSON.stringify(validTask());
    const first = await htask(['--json', 'submit', '-', '--idempotency-key', 'cli-test-key-1'], { baseUrl: t.url, input: task });
    const again = await htask(['--json', 'submit', '-', '--idempotency-key', 'cli-test-key-1'], { baseUrl: t.url, input: task });
    expect([first.code, again.code]).toEqual([0, 0]);
    expect(JSON.parse(again.stdout).task_id).toBe(JSON.parse(first.stdout).task_id);
    expect(JSON.parse(first.stdout).idempotency_key).toBe('cli-test-key-1');
  });

  it('lists services, in human and JSON form', async () => {
    const human = await htask(['services'], { baseUrl: t.url });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('real_world_verification');
    const json = await htask(['services', '--json'], { baseUrl: t.url });
    expect((JSON.parse(json.stdout) as unknown[]).length).toBe(t.deps.catalog.length);
  });

  it('sends a message', async () => {
    const sent = await htask(['message', '--message', 'Do you also cover Shelbyville?', '--reply-to', 'agent@mail.example-agent.dev'], { baseUrl: t.url });
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^Sent msg-\d{4}-[0-9a-f]{32}\./);
  });

  it('is on the PATH of the repository as npx htask', async () => {
    const { BASE_URL: _vite, ...env } = process.env;
    const out = await new Promise<string>((resolve, reject) =>
      execFile('npx', ['--no-install', 'htask', '--help'], { env, timeout: 60_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
    expect(out).toContain('Usage: htask');
  });
});
