import { describe, expect, it } from 'vitest';
import { newEventId, newMessageId, newTaskId, randomHex, TASK_ID_PATTERN } from '../src/domain/ids.js';

/**
 * Ids are drawn from a pool of CSPRNG bytes refilled 4 KiB at a time (randomHex): every id still
 * carries 128 random bits of its own, across refills, and no two share their bytes.
 */
describe('ids from the pooled random bytes', () => {
  it('task ids keep their shape and never repeat, across many refills of the pool', () => {
    const now = new Date('2030-03-10T10:00:00Z');
    const ids = Array.from({ length: 5000 }, () => newTaskId(now));
    for (const id of ids) expect(id).toMatch(TASK_ID_PATTERN);
    expect(ids[0]).toMatch(/^task-2030-/);
    expect(new Set(ids).size).toBe(ids.length);
    // 5,000 ids x 16 bytes: about twenty pools; no 16-byte value is ever handed out twice.
    const hex = new Set(
      [...ids, ...Array.from({ length: 500 }, () => newMessageId(now)), ...Array.from({ length: 500 }, () => newEventId(now))].map((id) => id.slice(-32)),
    );
    expect(hex.size).toBe(6000);
  });

  it('gives any length asked for, larger than the pool included, as lowercase hex', () => {
    expect(randomHex(1)).toMatch(/^[0-9a-f]{2}$/);
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
    // The bits look random: every hex digit appears in a long draw.
    expect(new Set(randomHex(4096)).size).toBe(16);
  });
});
