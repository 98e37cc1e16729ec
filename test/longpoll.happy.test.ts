import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { etagOf, heldCount, readTask, sleep } from './longpoll.support.js';
import { adminGet, patchOk, submit } from './operator.support.js';
import { STORES, startTestApp, useTestApp } from './support/app.js';

describe.each(STORES)('conditional reads on %s', (store) => {
  const t = useTestApp({ store });

  it('carries a strong ETag that stays while nothing changes', async () => {
    const id = await submit(t);
    const first = await readTask(t, id);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{16,}"$/);
    expect(JSON.parse(first.text)).toMatchObject({ task_id: id, status: 'submitted' });
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((await readTask(t, id)).headers.get('etag')).toBe(etag);
  });

  it('answers 304 with no body, the RateLimit headers and CORS headers to a current If-None-Match', async () => {
    const id = await submit(t);
    const etag = await etagOf(t, id);
    const origin = 'https://agent.example-agent.dev';
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await readTask(t, id, { 'if-none-match': header, origin });
      expect(res.status, header).toBe(304);
      expect(res.text).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
      expect(res.headers.get('ratelimit-policy')).toBeTruthy();
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-expose-headers')).toMatch(/ETag/);
      expect(res.headers.get('access-control-expose-headers')).toMatch(/Preference-Applied/);
      expect(res.headers.get('preference-applied')).toBeNull();
    }
  });

  it('lets browsers send If-None-Match and Prefer (preflight)', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example-agent.dev', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match, prefer' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/If-None-Match/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Prefer/);
  });

  it('changes the ETag with any field: the first view, acceptance, an edit of the notes', async () => {
    const id = await submit(t);
    const etags = [await etagOf(t, id)];
    await adminGet(t, `/api/v1/admin/tasks/${id}`);
    etags.push(await etagOf(t, id));
    await patchOk(t, id, { status: 'accepted' });
    etags.push(await etagOf(t, id));
    await patchOk(t, id, { operator_notes: 'On my way.' });
    etags.push(await etagOf(t, id));
    expect(new Set(etags).size).toBe(4);
    const stale = await readTask(t, id, { 'if-none-match': etags[0] as string });
    expect(stale.status).toBe(200);
    expect(JSON.parse(stale.text)).toMatchObject({ status: 'accepted', operator_notes: 'On my way.' });
    expect(stale.headers.get('etag')).toBe(etags[3]);
  });
});

describe.each(STORES)('long-poll on %s', (store) => {
  const t = useTestApp({ store });

  it('holds until the task changes, then answers 200 with the changed task', async () => {
    const id = await submit(t);
    const etag = await etagOf(t, id);
    const held = readTask(t, id, { 'if-none-match': etag, prefer: 'wait=30' });
    await heldCount(t, 1);
    await sleep(200);
    const changedAt = Date.now();
    await patchOk(t, id, { status: 'accepted' });
    const res = await held;
    expect(res.status).toBe(200);
    expect(Date.now() - changedAt).toBeLessThan(5000);
    expect(res.headers.get('preference-applied')).toBe('wait=30');
    expect(res.headers.get('etag')).not.toBe(etag);
    expect(JSON.parse(res.text)).toMatchObject({ task_id: id, status: 'accepted' });
    expect(t.deps.waits.size).toBe(0);
  });

  it('is woken by the operator first opening the task (seen_by_operator_at)', async () => {
    const id = await submit(t);
    const etag = await etagOf(t, id);
    const held = readTask(t, id, { 'if-none-match': etag, prefer: 'wait=30' });
    await heldCount(t, 1);
    await adminGet(t, `/api/v1/admin/tasks/${id}`);
    const res = await held;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).seen_by_operator_at).not.toBeNull();
  });

  it('answers 304 when the time passes without a change', async () => {
    const id = await submit(t);
    const etag = await etagOf(t, id);
    const res = await readTask(t, id, { 'if-none-match': etag, prefer: 'wait=1' });
    expect(res.status).toBe(304);
    expect(res.text).toBe('');
    expect(res.ms).toBeGreaterThanOrEqual(900);
    expect(res.ms).toBeLessThan(8000);
    expect(res.headers.get('preference-applied')).toBe('wait=1');
    expect(res.headers.get('etag')).toBe(etag);
  });

  it('reads a wait over 60 seconds as 60, and accepts wait among other preferences', async () => {
    const id = await submit(t);
    const etag = await etagOf(t, id);
    const held = readTask(t, id, { 'if-none-match': etag, prefer: 'respond-async, wait=3600' });
    await heldCount(t, 1);
    await patchOk(t, id, { status: 'rejected', operator_notes: 'Out of scope.' });
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('wait=60');
  });

  it('answers at once when the ETag sent is no longer current', async () => {
    const id = await submit(t);
    const old = await etagOf(t, id);
    await adminGet(t, `/api/v1/admin/tasks/${id}`);
    const res = await readTask(t, id, { 'if-none-match': old, prefer: 'wait=30' });
    expect(res.status).toBe(200);
    expect(res.ms).toBeLessThan(3000);
  });

  it('answers a final task at once, 304 without holding: a delivered or rejected task will not change (as MCP does)', async () => {
    const delivered = await submit(t);
    await patchOk(t, delivered, { status: 'accepted' });
    await patchOk(t, delivered, { status: 'delivered', operator_notes: 'Open on Sundays from 8 to 12.' });
    const rejected = await submit(t);
    await patchOk(t, rejected, { status: 'rejected', operator_notes: 'Out of scope.' });
    for (const id of [delivered, rejected]) {
      const etag = await etagOf(t, id);
      const res = await readTask(t, id, { 'if-none-match': etag, prefer: 'wait=30' });
      expect(res.status, id).toBe(304);
      expect(res.text).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
      // Nothing was held, so the preference was not applied; the answer came at once, not after 30 s.
      expect(res.headers.get('preference-applied')).toBeNull();
      expect(res.ms).toBeLessThan(10_000);
    }
  });

  it('wakes many waiters on one task with one change, and leaves waiters on other tasks alone', async () => {
    const id = await submit(t);
    const other = await submit(t);
    const etag = await etagOf(t, id);
    const otherEtag = await etagOf(t, other);
    const held = Array.from({ length: 40 }, () => readTask(t, id, { 'if-none-match': etag, prefer: 'wait=30' }));
    const bystander = readTask(t, other, { 'if-none-match': otherEtag, prefer: 'wait=3' });
    await heldCount(t, 41);
    await patchOk(t, id, { status: 'accepted' });
    const answers = await Promise.all(held);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(t.deps.waits.size).toBe(1);
    expect((await bystander).status).toBe(304);
  });

  it('counts a held request as one read', async () => {
    const id = await submit(t);
    const etag = await etagOf(t, id);
    const before = Number((await readTask(t, id)).headers.get('ratelimit-remaining'));
    const held = await readTask(t, id, { 'if-none-match': etag, prefer: 'wait=1' });
    expect(Number(held.headers.get('ratelimit-remaining'))).toBe(before - 1);
    const after = Number((await readTask(t, id)).headers.get('ratelimit-remaining'));
    expect(after).toBe(before - 2);
  });

  it('releases a held request whose client goes away', async () => {
    const id = await submit(t);
    const etag = await etagOf(t, id);
    // A plain socket of its own (not fetch's shared pool), cut while the request is held.
    const request = http.get(`${t.url}/api/v1/tasks/${id}`, { agent: false, headers: { 'if-none-match': etag, prefer: 'wait=60' } });
    request.on('error', () => undefined);
    await heldCount(t, 1);
    request.destroy();
    await expect.poll(() => t.deps.waits.size, { timeout: 3000 }).toBe(0);
  });
});

describe.each(STORES)('long-poll at shutdown on %s', (store) => {
  it('answers held requests 304 when the app closes, instead of dropping them', async () => {
    const t = await startTestApp({ store });
    let closed = false;
    try {
      const id = await submit(t);
      const etag = await etagOf(t, id);
      const held = Array.from({ length: 3 }, () => readTask(t, id, { 'if-none-match': etag, prefer: 'wait=60' }));
      await heldCount(t, 3);
      const closing = t.close();
      closed = true;
      const answers = await Promise.all(held);
      for (const res of answers) {
        expect(res.status).toBe(304);
        expect(res.ms).toBeLessThan(10_000);
        expect(res.headers.get('preference-applied')).toBe('wait=60');
      }
      await closing;
    } finally {
      if (!closed) await t.close();
    }
  });
});

describe.runIf(STORES.includes('postgres'))('long-poll across PostgreSQL instances', () => {
  const a = useTestApp({ store: 'postgres' });
  const b = useTestApp(() => ({ shareDatabaseWith: a }));

  it('wakes a request held on one instance within a second of a change made through another', async () => {
    const id = await submit(a);
    const etag = await etagOf(a, id);
    // Warm up: the first hold opens the instance's LISTEN connection.
    await readTask(a, id, { 'if-none-match': etag, prefer: 'wait=1' });
    await expect.poll(() => a.deps.changes.connected).toBe(true);
    const held = readTask(a, id, { 'if-none-match': etag, prefer: 'wait=30' });
    await heldCount(a, 1);
    const changedAt = Date.now();
    await patchOk(b, id, { status: 'accepted' });
    const changeDone = Date.now();
    const res = await held;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).status).toBe('accepted');
    expect(Date.now() - changeDone).toBeLessThan(1000);
    expect(Date.now() - changedAt).toBeLessThan(3000);
  });

  it('re-checks held requests when its LISTEN connection comes back', async () => {
    const id = await submit(a);
    const etag = await etagOf(a, id);
    await expect.poll(() => a.deps.changes.connected).toBe(true);
    const held = readTask(a, id, { 'if-none-match': etag, prefer: 'wait=30' });
    await heldCount(a, 1);
    // Take the LISTEN connection down, change the task while it is down, and let it come back.
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: a.config.databaseUrl });
    await admin.connect();
    try {
      await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'LISTEN%' and pid <> pg_backend_pid()",
      );
    } finally {
      await admin.end();
    }
    await patchOk(b, id, { status: 'accepted' });
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.ms).toBeLessThan(15_000);
  });
});
