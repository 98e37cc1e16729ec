import { describe, expect, it } from 'vitest';
import { etagOf, readTask } from './longpoll.support.js';
import { patchOk, submit } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

describe.each(STORES)('status read cache (%s)', (store) => {
  const t = useTestApp({ store });

  it('answers repeated reads from the cache and shows a change on the very next read', async () => {
    const id = await submit(t);
    await expect.poll(() => t.deps.changes.connected).toBe(true);
    const first = await readTask(t, id);
    expect(first.status).toBe(200);
    // The creation's own notification may overtake the first read (then it is not kept): read until kept.
    await expect.poll(async () => (await readTask(t, id)).status === 200 && t.deps.taskCache.get(id) !== undefined).toBe(true);
    const again = await readTask(t, id);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    const notModified = await readTask(t, id, { 'if-none-match': first.headers.get('etag') ?? '' });
    expect(notModified.status).toBe(304);

    await patchOk(t, id, { status: 'accepted' });
    const after = await readTask(t, id);
    expect(JSON.parse(after.text).status).toBe('accepted');
    expect(after.headers.get('etag')).not.toBe(first.headers.get('etag'));
    expect((await readTask(t, id, { 'if-none-match': first.headers.get('etag') ?? '' })).status).toBe(200);
  });

  it('never caches an unknown task: it is found once it exists', async () => {
    const missing = await readTask(t, 'task-2030-00000000000000000000000000000009');
    expect(missing.status).toBe(404);
  });
});

describe.runIf(STORES.includes('postgres'))('status read cache across PostgreSQL instances', () => {
  const a = useTestApp({ store: 'postgres' });
  const b = useTestApp(() => ({ shareDatabaseWith: a }));

  it("shows a change made through instance B on instance A's next read", async () => {
    await expect.poll(() => a.deps.changes.connected && b.deps.changes.connected).toBe(true);
    const id = await submit(b);
    const before = await etagOf(a, id);
    await expect.poll(async () => (await readTask(a, id)).status === 200 && a.deps.taskCache.get(id) !== undefined).toBe(true);
    for (const status of ['accepted', 'delivered'] as const) {
      const body = status === 'delivered' ? { status, operator_notes: 'Done: the shop opens at 8.' } : { status };
      const cached = a.deps.taskCache.get(id);
      await patchOk(b, id, body);
      // B answers on commit; its notification reaches A a moment later (on loopback, well under
      // a millisecond; later on a loaded machine). From then on, A's next read is the new task.
      await expect.poll(() => a.deps.taskCache.get(id) !== cached || cached === undefined).toBe(true);
      const read = await readTask(a, id);
      expect(read.status).toBe(200);
      expect(JSON.parse(read.text).status).toBe(status);
      expect(read.headers.get('etag')).not.toBe(before);
    }
    // The operator's first view (a change too) through B reaches A's cached copy as well.
    const viaA = JSON.parse((await readTask(a, id)).text) as { status: string };
    expect(viaA.status).toBe('delivered');
  });
});
