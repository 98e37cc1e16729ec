import { describe, expect, it } from 'vitest';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/**
 * A submission whose e-mail domain is already known to take mail (checked within the hour) sends
 * no DNS query, so it needs no screening before its transaction: the blocklist, the client's quotas
 * and the daily cap are checked once, inside the group commit, in the same order (issue 28: three
 * statements less per submission on the common path). The refusals are the same as before.
 */
describe.each(STORES)('screening of submissions with a known e-mail domain on %s', (store) => {
  const statements: string[] = [];
  const t = useTestApp({ store, limits: 'production', env: { TRUST_PROXY: '1' }, onQuery: (query) => statements.push(query.sql) });
  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it('reads the blocklist and the counters once, in the transaction', async () => {
    // The first submission from the domain sends the DNS query (and is screened before it).
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), from('10.9.0.1'))).status).toBe(202);
    statements.length = 0;
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), from('10.9.0.2'))).status).toBe(202);
    const blocklistReads = statements.filter((s) => /from "blocklist"/.test(s));
    const counterReads = statements.filter((s) => /^select .* from "counters"/.test(s));
    expect(blocklistReads).toHaveLength(1);
    expect(counterReads).toHaveLength(1);
  });

  it('still refuses a blocked client (403) and a spent one (429), in that order', async () => {
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), from('10.9.1.1'))).status).toBe(202);
    const block = await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: '10.9.1.0/24' }, { authorization: `Bearer ${TEST_ADMIN_KEY}` });
    expect(block.status).toBe(201);
    const blocked = await postJson(`${t.url}/api/v1/tasks`, validTask(), from('10.9.1.2'));
    expect(blocked.status).toBe(403);
    expect(((await blocked.json()) as { error: string }).error).toBe('client_blocked');
    // Three an hour from one client: the fourth is refused with the quota's headers.
    for (let i = 0; i < 2; i++) expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), from('10.9.2.1'))).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), from('10.9.2.1'))).status).toBe(202);
    const spent = await postJson(`${t.url}/api/v1/tasks`, validTask(), from('10.9.2.1'));
    expect(spent.status).toBe(429);
    expect(spent.headers.get('retry-after')).not.toBeNull();
  });
});
