import { describe, expect, it } from 'vitest';
import { GroupCommit, maxBatchFor, type Outcome, SQLITE_MAX_BATCH } from '../src/services/tasks/group-commit.js';

/**
 * The group commit's own rules, with a commit function that records its batches: items that
 * arrive together share one commit, each is answered with its own outcome, and a commit that
 * throws fails only the item at fault — or, for a store fault, every item at once.
 */

function recorder(commit: (items: number[]) => Outcome<string>[]) {
  const batches: number[][] = [];
  const group = new GroupCommit<number, string>(async (items) => {
    batches.push(items);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return commit(items);
  });
  return { group, batches };
}

describe('group commit', () => {
  it('commits the items that arrive together in one batch and answers each with its own outcome', async () => {
    const { group, batches } = recorder((items) =>
      items.map((n) => (n % 2 === 0 ? { ok: true, value: `even ${n}` } : { ok: false, error: new Error(`odd ${n}`) })),
    );
    const answers = await Promise.allSettled([1, 2, 3, 4].map((n) => group.submit(n)));
    expect(batches).toEqual([[1, 2, 3, 4]]);
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message))).toEqual(['odd 1', 'even 2', 'odd 3', 'even 4']);
  });

  it('puts what arrives during a commit into the next batch', async () => {
    const { group, batches } = recorder((items) => items.map((n) => ({ ok: true, value: String(n) })));
    const first = group.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [group.submit(2), group.submit(3)];
    await Promise.all([first, ...later]);
    expect(batches).toEqual([[1], [2, 3]]);
  });

  it('commits the items of a failed batch again one at a time, so only the one at fault fails', async () => {
    const { group, batches } = recorder((items) => {
      if (items.includes(13)) throw new Error('item 13 breaks the transaction');
      return items.map((n) => ({ ok: true, value: `ok ${n}` }));
    });
    const answers = await Promise.allSettled([11, 12, 13, 14].map((n) => group.submit(n)));
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message))).toEqual([
      'ok 11',
      'ok 12',
      'item 13 breaks the transaction',
      'ok 14',
    ]);
    expect(batches).toEqual([[11, 12, 13, 14], [11], [12], [13], [14]]);
  });

  it('fails every item of the batch at once when the store itself fails', async () => {
    const fault = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const { group, batches } = recorder(() => {
      throw fault;
    });
    const answers = await Promise.allSettled([1, 2, 3].map((n) => group.submit(n)));
    expect(answers.every((a) => a.status === 'rejected' && a.reason === fault)).toBe(true);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('takes at most maxBatch items a batch, and gives the event loop a turn before the next one', async () => {
    // A commit with no wait of its own, as on SQLite: without the turn, the three batches and
    // their answers would run in one go, ahead of everything else the loop had to do.
    const events: string[] = [];
    const group = new GroupCommit<number, string>(async (items) => {
      events.push(`commit ${items.join(',')}`);
      return items.map((n) => ({ ok: true, value: String(n) }));
    }, 2);
    const answers = [1, 2, 3, 4, 5].map((n) => group.submit(n).then((value) => events.push(`answer ${value}`)));
    setImmediate(() => events.push('another request'));
    await Promise.all(answers);
    expect(events).toEqual(['commit 1,2', 'answer 1', 'answer 2', 'another request', 'commit 3,4', 'answer 3', 'answer 4', 'commit 5', 'answer 5']);
  });

  it('caps batches at 16 on SQLite, whose transactions hold the event loop, and at 256 on PostgreSQL', () => {
    expect(maxBatchFor('sqlite')).toBe(SQLITE_MAX_BATCH);
    expect(SQLITE_MAX_BATCH).toBe(16);
    expect(maxBatchFor('postgres')).toBe(256);
  });

  it('keeps committing after a failed batch', async () => {
    let fail = true;
    const { group } = recorder((items) => {
      if (fail) {
        fail = false;
        throw new Error('once');
      }
      return items.map((n) => ({ ok: true, value: String(n) }));
    });
    await expect(group.submit(1)).rejects.toThrow('once');
    await expect(group.submit(2)).resolves.toBe('2');
  });
});
