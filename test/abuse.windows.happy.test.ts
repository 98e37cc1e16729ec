import { describe, expect, it } from 'vitest';
import { counterExpiry, windowOf } from '../src/abuse/limits.js';

/**
 * Windows are remembered per kind while `now` stays inside them (abuse/limits.ts): the same
 * moment's window is asked for several times per submission. Whatever order moments come in (a
 * test clock goes back too), each gets its own window.
 */

const at = (iso: string) => new Date(iso);

describe('quota windows', () => {
  it('give each moment its own window, forwards, backwards and at the edges', () => {
    const moments = [
      '2030-03-10T10:59:59.999Z',
      '2030-03-10T11:00:00.000Z',
      '2030-03-10T10:30:00.000Z',
      '2030-03-10T23:59:59.999Z',
      '2030-03-11T00:00:00.000Z',
      '2030-03-09T12:00:00.000Z',
      '2030-03-10T10:07:30.000Z',
      '2030-03-10T10:07:59.999Z',
      '2030-03-10T10:08:00.000Z',
    ];
    for (const moment of moments) {
      const now = at(moment);
      expect(windowOf('hour', now).id, moment).toBe(moment.slice(0, 13));
      expect(windowOf('minute', now).id, moment).toBe(moment.slice(0, 16));
      expect(windowOf('day', now).id, moment).toBe(moment.slice(0, 10));
      expect(windowOf('day', now).resetsAt.toISOString(), moment).toBe(
        new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
      );
    }
  });

  it('keep a counter one hour past its window', () => {
    expect(counterExpiry(windowOf('hour', at('2030-03-10T10:15:00.000Z')))).toBe('2030-03-10T12:00:00.000Z');
    expect(counterExpiry(windowOf('day', at('2030-03-10T10:15:00.000Z')))).toBe('2030-03-11T01:00:00.000Z');
    expect(counterExpiry(windowOf('hour', at('2030-03-10T09:15:00.000Z')))).toBe('2030-03-10T11:00:00.000Z');
  });
});
