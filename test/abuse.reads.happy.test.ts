import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ReadLimiter } from '../src/abuse/reads.js';
import { STORES, useTestApp } from './support/app.js';

describe.each(STORES)('read counters shared through the store on %s', (store) => {
  const t = useTestApp({ store });

  it('flushes the reads of more clients than one statement can bind (3 parameters each: over the SQLite and PostgreSQL limits)', async () => {
    const limiter = new ReadLimiter(t.store.db, t.clock, pino({ level: 'silent' }), 600);
    const clients = Array.from({ length: 22_000 }, (_, i) => `client-${i}`);
    for (const client of clients) limiter.take(client);
    limiter.take('client-7');
    await limiter.stop();
    const rows = await t.store.db.selectFrom('counters').select(['key', 'count']).where('key', 'like', 'reads:m:client-%').execute();
    expect(rows).toHaveLength(22_000);
    expect(rows.reduce((sum, r) => sum + Number(r.count), 0)).toBe(22_001);
  });

  it('shares one client\u2019s reads between two limiters on the same store', async () => {
    const log = pino({ level: 'silent' });
    const first = new ReadLimiter(t.store.db, t.clock, log, 5);
    const second = new ReadLimiter(t.store.db, t.clock, log, 5);
    for (let i = 0; i < 4; i++) expect(first.take('shared-client').remaining).toBe(4 - i);
    await first.sync();
    second.take('shared-client');
    await second.sync();
    expect(second.take('shared-client').remaining).toBe(-1);
    await first.stop();
    await second.stop();
  });
});
