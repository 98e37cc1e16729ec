import type { CompiledQuery } from 'kysely';
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

  it('counts a flush once when its statement was applied but the answer was lost, and again when it never went out', async () => {
    // The store applies the upsert, then the client gives up on the answer ("Query read timeout", as
    // pg's read timeout says on a loaded machine): sending it again would count those reads twice.
    let fault: 'after' | 'before' | undefined;
    const db = t.store.db;
    const faulty = new Proxy(db, {
      get(target, property) {
        if (property !== 'executeQuery') {
          // Kysely's methods read private fields: called on the proxy they would throw.
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (query: CompiledQuery) => {
          const upsert = /^insert into "counters"/i.test(query.sql);
          if (upsert && fault === 'before') {
            fault = undefined;
            throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
          }
          const result = await target.executeQuery(query);
          if (upsert && fault === 'after') {
            fault = undefined;
            throw new Error('Query read timeout');
          }
          return result;
        };
      },
    });
    const limiter = new ReadLimiter(faulty, t.clock, pino({ level: 'silent' }), 10);
    const count = async (client: string) =>
      Number((await t.store.db.selectFrom('counters').select('count').where('key', 'like', `reads:m:${client}:%`).executeTakeFirst())?.count ?? 0);
    fault = 'after';
    limiter.take('lost-answer');
    limiter.take('lost-answer');
    await limiter.sync();
    expect(fault).toBeUndefined();
    await limiter.sync();
    expect(await count('lost-answer')).toBe(2);
    fault = 'before';
    limiter.take('never-sent');
    await limiter.sync();
    expect(fault).toBeUndefined();
    await limiter.sync();
    expect(await count('never-sent')).toBe(1);
    await limiter.stop();
  });
});
