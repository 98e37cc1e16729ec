import { describe, expect, it } from 'vitest';
import { clientHash, clientKey, networkKey } from '../src/domain/network/client.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/**
 * Issue 33, finding 5: every spelling of one client address (a port, brackets, IPv4-mapped IPv6
 * in any form, upper-case or zero-padded IPv6, a zone, a proxy's `unknown`) is one client for the
 * limits, the blocklist and auto-block; admin ip blocks take networks of both families and are
 * stored in the canonical form.
 */

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
type Json = Record<string, unknown>;

/** Spellings of one client each, as X-Forwarded-For may carry them (the first is canonical). */
const SPELLINGS: Record<string, string[]> = {
  '198.51.100.201': [
    '198.51.100.201',
    '198.51.100.201:5000',
    '::ffff:198.51.100.201',
    '::FFFF:c633:64c9',
    '0:0:0:0:0:ffff:198.51.100.201',
    '[::ffff:c633:64c9]:443',
  ],
  '2001:db8:5:0::/64': [
    '2001:db8:5::1',
    '[2001:db8:5::1]:443',
    '2001:DB8:5:0:FFFF::2',
    '2001:0db8:0005:0000:0000:0000:0000:0009',
    '2001:db8:5::7%eth0',
    '[2001:db8:5::8]',
  ],
  unknown: ['unknown', 'Unknown', '_', 'not-an-address', '198.51.100.300', '01.02.03.04'],
};

describe('the canonical client key', () => {
  it.each(Object.entries(SPELLINGS))('%s: every spelling gives the same key', (key, spellings) => {
    for (const spelling of spellings) expect(clientKey(spelling), spelling).toBe(key);
  });

  it('writes block values canonically, networks of both families included', () => {
    expect(networkKey('0:0:0:0:0:ffff:c633:6452')).toBe('198.51.100.82');
    expect(networkKey('198.51.100.79/32')).toBe('198.51.100.79');
    expect(networkKey('198.51.100.79/24')).toBe('198.51.100.0/24');
    expect(networkKey('::ffff:198.51.100.0/120')).toBe('198.51.100.0/24');
    expect(networkKey('2001:DB8:AA12::/40')).toBe('2001:db8:aa00:0::/40');
    expect(networkKey('2001:db8:5::1/128')).toBe('2001:db8:5:0::/64');
    for (const refused of ['198.51.100.0/7', '2001:db8::/15', '198.51.100.0/33', '2001:db8::/129', 'unknown', '10.0.0.0/'])
      expect(networkKey(refused), refused).toBeNull();
  });
});

describe.each(STORES)('client spellings through limits and blocks on %s', (store) => {
  const t = useTestApp({ store, limits: 'production', env: { TRUST_PROXY: '1', AUTO_BLOCK_REFUSALS: '6' } });
  const submit = (xff: string) => postJson(`${t.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': xff });
  const block = async (value: string): Promise<{ status: number; body: Json }> => {
    const res = await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value }, admin);
    return { status: res.status, body: (await res.json()) as Json };
  };

  it.each(Object.entries(SPELLINGS))('%s: six spellings share one hourly quota of 3, and its refusals one auto-block', async (_key, spellings) => {
    const statuses: number[] = [];
    for (const spelling of spellings) statuses.push((await submit(spelling)).status);
    expect(statuses).toEqual([202, 202, 202, 429, 429, 429]);
    // The refusals of every spelling count toward one auto-block (AUTO_BLOCK_REFUSALS=6).
    for (const spelling of spellings.slice(0, 3)) expect((await submit(spelling)).status).toBe(429);
    for (const spelling of spellings) expect((await submit(spelling)).status, spelling).toBe(403);
  });

  it('an admin block in any spelling is stored canonical and matches every spelling', async () => {
    const mapped = await block('0:0:0:0:0:ffff:c633:6452');
    expect(mapped.status).toBe(201);
    expect(mapped.body.value).toBe(clientHash(t.deps.secret, '198.51.100.82'));
    for (const spelling of ['198.51.100.82', '198.51.100.82:80', '::ffff:198.51.100.82']) expect((await submit(spelling)).status, spelling).toBe(403);
    // The same address in another spelling replaces the entry rather than adding a second one.
    expect((await block('198.51.100.82')).body.value).toBe(mapped.body.value);
    const list = (await (await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: admin })).json()) as { blocklist: Json[] };
    expect(list.blocklist.filter((e) => e.value === mapped.body.value)).toHaveLength(1);
  });

  it('admin blocks accept networks of both families, /32 and /24 alike', async () => {
    expect((await block('198.51.100.79/32')).status).toBe(201);
    expect((await submit('198.51.100.79')).status).toBe(403);
    expect((await block('203.0.113.0/24')).status).toBe(201);
    expect((await submit('203.0.113.77:1234')).status).toBe(403);
    expect((await submit('::ffff:203.0.113.200')).status).toBe(403);
    expect((await submit('203.0.114.1')).status).toBe(202);
    expect((await block('2001:db8:aa00::/40')).status).toBe(201);
    expect((await submit('[2001:db8:aa12:3::1]:443')).status).toBe(403);
    expect((await submit('2001:db8:ab00::1')).status).toBe(202);
    // Messages are matched the same way.
    const message = await postJson(
      `${t.url}/api/v1/messages`,
      { message: 'A question about the service.', reply_to: 'agent@mail.example-agent.dev' },
      { 'x-forwarded-for': '203.0.113.9' },
    );
    expect(message.status).toBe(403);
    const tooBroad = await block('10.0.0.0/7');
    expect(tooBroad.status).toBe(422);
    expect((tooBroad.body.details as string[])[0]).toMatch(/^value must be an IPv4 address or network/);
  });
});
