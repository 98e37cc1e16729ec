import { describe, expect, it } from 'vitest';
import { runRetention } from '../src/services/runtime/retention.js';
import { postForm, signIn } from './console.support.js';
import { ADMIN, adminGet, submit, taskIn } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp } from './support/app.js';
import { planProblems } from './support/plans.js';

/**
 * Issue 28: no console page, admin read, metrics scrape, discovery document or retention batch may
 * cost more as history grows. Every statement those run (captured through the store's query hook)
 * is explained and checked (support/plans.ts).
 */

for (const store of STORES) {
  describe(`query plans of pages and endpoints (${store})`, () => {
    const clock = new TestClock('2030-03-10T10:00:00.000Z');
    const seen = new Map<string, readonly unknown[]>();
    let capturing = false;
    const t = useTestApp({
      store,
      clock,
      onQuery: (query) => {
        if (capturing) seen.set(query.sql, query.parameters);
      },
    });

    it('every statement the console, the admin API, metrics, discovery and retention run uses an index', async () => {
      // A little of everything: each status, test tasks, messages naming tasks, an old final task.
      clock.set('2029-10-01T10:00:00.000Z');
      await taskIn(t, 'delivered');
      await taskIn(t, 'rejected');
      clock.set('2030-03-10T10:00:00.000Z');
      const open = await taskIn(t, 'submitted');
      await taskIn(t, 'accepted');
      await taskIn(t, 'delivered', { description: 'A test task for the integration, please ignore it.' });
      await submit(t, { requester: 'test-bot' });
      for (const message of [`Please withdraw ${open}, it is no longer needed.`, 'A question about your services, in general.']) {
        const sent = await postJson(`${t.url}/api/v1/messages`, { message, reply_to: 'agent@mail.dev' });
        expect(sent.status).toBe(201);
      }
      const { cookie, csrf } = await signIn(t);
      const console = (path: string) => fetch(`${t.url}${path}`, { headers: { cookie } });
      const snoozed = await taskIn(t, 'submitted');
      expect((await postForm(t, `/operator/tasks/${snoozed}/snooze`, { _csrf: csrf, hours: '3' }, cookie)).status).toBe(303);

      capturing = true;
      const pages: string[] = [];
      for (const status of ['open', 'all', 'submitted', 'accepted', 'delivered', 'rejected', 'under_review', 'in_progress']) {
        for (const order of ['oldest', 'newest', 'due']) {
          for (const test of ['', 'only', 'exclude']) pages.push(`/operator?status=${status}&order=${order}${test ? `&test=${test}` : ''}`);
        }
      }
      pages.push(
        '/operator/messages',
        '/operator/messages?show=all',
        `/operator/tasks/${open}`,
        '/operator/stats',
        '/operator/stats?days=365',
        '/operator/service-level',
        '/operator/outbox',
        '/operator/blocklist',
      );
      // Issue 31: search by key (task id, message id, e-mail) and words, each filter and sort, snoozes.
      const messageId = ((await (await adminGet(t, '/api/v1/admin/messages?limit=1')).json()) as { messages: { message_id: string }[] }).messages[0]
        ?.message_id;
      for (const status of ['open', 'all', 'delivered']) {
        for (const filter of [
          `q=${open}`,
          `q=${messageId}`,
          'q=agent%40mail.example-agent.dev',
          'q=bakery',
          'type=real_world_verification',
          'location=onsite',
          'location=remote',
          'requester=agent%40mail.example-agent.dev',
          'deadline_before=2030-12-31',
          'overdue=1',
          'sort=deadline',
          'sort=eta',
          'select=1&order=newest',
        ])
          pages.push(`/operator?status=${status}&${filter}`);
      }
      pages.push('/operator?status=snoozed');
      for (const status of ['pending', 'sent', 'failed']) pages.push(`/operator/outbox?status=${status}`);
      for (const path of pages) expect((await console(path)).status, path).toBe(200);
      // The inbox's "Mark done" (issue 31): a key lookup, the kept count and the audit entry.
      const latest = (await (await adminGet(t, '/api/v1/admin/messages?limit=1')).json()) as { messages: { message_id: string }[] };
      const done = await postForm(t, `/operator/messages/${latest.messages[0]?.message_id}/done`, { _csrf: csrf }, cookie);
      expect(done.status).toBe(303);
      // A second page of the queue and of the messages: the keyset cursor's query.
      for (const [path, list] of [
        ['/api/v1/admin/tasks?limit=1', 'tasks'],
        ['/api/v1/admin/tasks?limit=1&status=open&order=oldest', 'tasks'],
        ['/api/v1/admin/tasks?limit=1&status=open&test=exclude', 'tasks'],
        ['/api/v1/admin/messages?limit=1', 'messages'],
      ] as const) {
        const first = (await (await adminGet(t, path)).json()) as { next_cursor: string | null };
        expect(first.next_cursor, path).not.toBeNull();
        expect((await adminGet(t, `${path}&cursor=${encodeURIComponent(first.next_cursor ?? '')}`)).status, list).toBe(200);
      }
      for (const status of ['', 'open', 'submitted', 'delivered']) {
        for (const test of ['', 'only', 'exclude']) {
          const query = new URLSearchParams({ ...(status ? { status } : {}), ...(test ? { test } : {}) });
          expect((await adminGet(t, `/api/v1/admin/tasks?${query}`)).status).toBe(200);
        }
      }
      expect((await adminGet(t, '/api/v1/admin/stats')).status).toBe(200);
      expect((await adminGet(t, `/api/v1/admin/tasks/${open}`)).status).toBe(200);
      expect((await fetch(`${t.url}/metrics`, { headers: ADMIN })).status).toBe(200);
      for (const doc of ['/.well-known/human.json', '/.well-known/capabilities.json']) {
        clock.advance(60_000); // past the figures' cache: the cold path
        expect((await fetch(`${t.url}${doc}`)).status, doc).toBe(200);
      }
      clock.set('2030-06-01T10:00:00.000Z'); // the 2029 tasks are now past retention
      const run = await runRetention(t.deps);
      expect(run?.erased_tasks).toBeGreaterThan(0);
      capturing = false;

      const problems = await planProblems(t, seen);
      expect(seen.size).toBeGreaterThan(20);
      expect(problems, problems.join('\n')).toEqual([]);
    });
  });
}
