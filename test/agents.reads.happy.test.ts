import { describe, expect, it } from 'vitest';
import { submit } from './operator.support.js';
import { AGENTS_ENV, type TestAgent, useAgents } from './support/agents.js';
import { STORES, type TestApp, TestClock, useTestApp } from './support/app.js';
import { byLane, header, type RawRead, rawRead } from './support/raw-reads.js';

/**
 * Signed status reads (docs/verified-agents.md#cost): the status read's fast lane verifies a
 * signed read and answers it as an unsigned one, counted by the agent's key under the verified
 * policy, so a signed read costs an unsigned one plus the verification. The signature is verified
 * once, whoever answers: a read the lane then hands to the framework (here, over the read limit)
 * gets the framework's answer, not its own nonce refused as a replay.
 */

const READ_LIMIT = 4;

describe.each(STORES)('signed status reads on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock, env: { ...AGENTS_ENV, READ_LIMIT_PER_MINUTE: String(READ_LIMIT) } });
  const keys = useAgents(2, 1);
  const agent = (i: number) => keys.agents[i] as TestAgent;
  const signedRead = async (id: string, who: TestAgent, headers: Record<string, string> = {}) =>
    rawRead(t, id, { ...(await keys.sign(who, 'GET', `/api/v1/tasks/${id}`, clock.now())), ...headers });
  const remaining = (read: RawRead) => Number(header(read, 'ratelimit-remaining'));

  /** A task the lane holds a recording of: read unsigned (from the test's address) until the lane answers. */
  async function recordedTask(app: TestApp): Promise<{ id: string; unsigned: RawRead }> {
    const id = await submit(app);
    let unsigned = await rawRead(app, id);
    for (let i = 0; i < 50 && !byLane(unsigned); i++) {
      await new Promise((r) => setTimeout(r, 20));
      clock.advance(61_000);
      unsigned = await rawRead(app, id);
    }
    expect(byLane(unsigned)).toBe(true);
    return { id, unsigned };
  }

  it('answers a signed read in the lane, counted by the key under the verified policy', async () => {
    const { id, unsigned } = await recordedTask(t);
    expect(header(unsigned, 'ratelimit-policy')).toMatch(/comment="address"/);

    const first = await signedRead(id, agent(0));
    expect(first.status).toBe(200);
    expect(byLane(first)).toBe(true);
    expect(first.body).toBe(unsigned.body);
    expect(header(first, 'ratelimit-policy')).toMatch(/comment="verified"/);
    expect(remaining(first)).toBe(READ_LIMIT - 1);
    const second = await signedRead(id, agent(0));
    expect(byLane(second)).toBe(true);
    expect(remaining(second)).toBe(READ_LIMIT - 2);
    // Another key, and the address, keep their own counts.
    expect(remaining(await signedRead(id, agent(1)))).toBe(READ_LIMIT - 1);
    const again = await rawRead(t, id);
    expect(header(again, 'ratelimit-policy')).toMatch(/comment="address"/);
    expect(remaining(again)).toBe(remaining(unsigned) - 1);

    // The first 304 of the task is the framework's (the lane records it), the next the lane's.
    const known = { 'if-none-match': header(first, 'etag') ?? '' };
    expect((await signedRead(id, agent(0), known)).status).toBe(304);
    const notModified = await signedRead(id, agent(0), known);
    expect(notModified.status).toBe(304);
    expect(byLane(notModified)).toBe(true);
    expect(remaining(notModified)).toBe(0);
  });

  it('refuses a bad signature with its reason, a replay as a replay, and a read over the limit with 429', async () => {
    clock.advance(61_000);
    const { id } = await recordedTask(t);
    const stranger = await signedRead(id, agent(2));
    expect(stranger.status).toBe(400);
    expect(JSON.parse(stranger.body)).toMatchObject({ error: 'invalid_signature', details: [expect.stringMatching(/not in the agent's key directory/)] });

    const headers = await keys.sign(agent(1), 'GET', `/api/v1/tasks/${id}`, clock.now());
    expect((await rawRead(t, id, headers)).status).toBe(200);
    const replay = await rawRead(t, id, headers);
    expect(replay.status).toBe(400);
    expect(JSON.parse(replay.body).details).toEqual(['signature: the nonce was already used (a replay)']);

    // Over the limit the lane hands the read to the framework, which must not verify it again.
    for (let i = 1; i < READ_LIMIT; i++) expect((await signedRead(id, agent(1))).status).toBe(200);
    const over = await signedRead(id, agent(1));
    expect(over.status).toBe(429);
    expect(JSON.parse(over.body)).toMatchObject({ error: 'rate_limited' });
  });
});
