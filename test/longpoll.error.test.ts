import { beforeAll, describe, expect, it } from 'vitest';
import { etagOf, readTask } from './longpoll.support.js';
import { submit } from './operator.support.js';
import { STORES, startTestApp, useTestApp } from './support/app.js';

describe.each(STORES)('conditional reads and long-poll, bad input, on %s', (store) => {
  const t = useTestApp({ store });
  let id: string;
  let etag: string;
  beforeAll(async () => {
    id = await submit(t);
    etag = await etagOf(t, id);
  });

  it.each(['wait=abc', 'wait=0', 'wait=-5', 'wait=1.5', 'wait', 'wait=', 'handling=lenient', `wait=${'9'.repeat(2000)}`, 'wait=5x'])(
    'does not hold with Prefer: %s (304 at once, no Preference-Applied)',
    async (prefer) => {
      const res = await readTask(t, id, { 'if-none-match': etag, prefer: prefer.slice(0, 4000) });
      expect(res.status).toBe(304);
      expect(res.ms).toBeLessThan(900);
      expect(res.headers.get('preference-applied')).toBeNull();
      expect(t.deps.waits.size).toBe(0);
    },
  );

  it('does not hold without If-None-Match: 200 at once', async () => {
    const res = await readTask(t, id, { prefer: 'wait=30' });
    expect(res.status).toBe(200);
    expect(res.ms).toBeLessThan(3000);
    expect(res.headers.get('preference-applied')).toBeNull();
  });

  it('answers 200 to an If-None-Match that names no ETag of this task', async () => {
    for (const header of ['"nope"', 'garbage', ',,,', 'W/"x"']) {
      const res = await readTask(t, id, { 'if-none-match': header });
      expect(res.status, header).toBe(200);
      expect(res.headers.get('etag')).toBe(etag);
    }
  });

  it('answers an unknown or malformed task id with 404 at once, whatever it is asked to wait', async () => {
    for (const taskId of ['task-2030-00000000000000000000000000000000', 'nonsense']) {
      const res = await readTask(t, taskId, { 'if-none-match': '*', prefer: 'wait=30' });
      expect(res.status).toBe(404);
      expect(res.ms).toBeLessThan(3000);
      expect(JSON.parse(res.text).error).toBe('task_not_found');
      expect(res.headers.get('etag')).toBeNull();
    }
  });

  it('still refuses reads over the limit while requests are held', async () => {
    const limited = await startTestApp({ store, env: { READ_LIMIT_PER_MINUTE: '3' } });
    try {
      const task = await submit(limited);
      const tag = await etagOf(limited, task);
      const held = readTask(limited, task, { 'if-none-match': tag, prefer: 'wait=2' });
      await readTask(limited, task);
      const refused = await readTask(limited, task, { 'if-none-match': tag, prefer: 'wait=30' });
      expect(refused.status).toBe(429);
      expect(refused.ms).toBeLessThan(3000);
      expect((await held).status).toBe(304);
    } finally {
      await limited.close();
    }
  });
});
