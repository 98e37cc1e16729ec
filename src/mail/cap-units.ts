import { consumeEmailCapBlock, returnEmailCap } from '../abuse/quotas.js';
import { utcDay } from '../domain/time.js';
import type { Db } from '../store/db.js';
import { DIGEST_KIND, isNotification, notificationShare } from './priority.js';

/**
 * Units of the daily e-mail cap a worker takes from the store at once: 32, or a thousandth of a
 * larger cap (at most 256). A block is a write of its own (an fsync on SQLite); at thousands of
 * mails a second, blocks of 32 were a write every 16 ms. What a crash can leave counted as used
 * stays under 0.1 % of the cap.
 */
export function capBlock(cap: number): number {
  return Math.min(256, Math.max(32, Math.floor(cap / 1000)));
}
/** Blocks are taken only while this many blocks would still be left under the limit. */
const HEADROOM_BLOCKS = 4;

/**
 * The mail worker's units of the daily e-mail cap, taken from the store in blocks (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28): a
 * counter write per mail, each its own commit, was most of what a mail cost the worker behind a
 * flood. A block is taken only when it fits under the limit with HEADROOM_BLOCKS more to spare;
 * nearer the cap, and for digests, the worker takes units one at a time exactly as before
 * (mail/deliver.ts), so the cap is never exceeded and the notifications' share and its digest
 * unit hold. Units are kept apart by the limit they were taken under: those taken under the
 * notifications' share serve any mail, those taken under the whole cap only requester mail.
 * What a worker holds and has not used is given back when it finds no more mail, when the UTC
 * day turns and when it stops; a crash leaves at most a block counted as used for that day.
 */
export class CapUnits {
  /** When the units held were taken: they count against that UTC day. */
  private heldSince = new Date(0);
  /**
   * Takes and give-backs run one at a time: the worker sends many mails at once, and slots that
   * all found no unit left each took a block of their own, at the same moment, on the same counter
   * row (on PostgreSQL each waited for the others' row lock: 10 ms a take behind a flood).
   */
  private turn: Promise<unknown> = Promise.resolve();
  /** Taken under the notifications' share: good for any mail. */
  private shared = 0;
  /** Taken under the whole cap: requester mail only. */
  private requesterOnly = 0;

  private readonly block: number;

  constructor(
    private readonly db: Db,
    private readonly cap: number,
  ) {
    this.block = capBlock(cap);
  }

  /**
   * Runs `work` in turn with every other use of the cap by this worker: `take` and `giveBack` run
   * in turn, and so does the worker's exact, one-unit-at-a-time path near the cap (mail/deliver.ts),
   * whose read-then-decide (send, or bundle into the digest) assumes no other mail decides meanwhile.
   */
  inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** Gives back the units held and not used, to the day they were taken on; `from` starts the next holding. */
  giveBack(from?: Date): Promise<void> {
    return this.inTurn(() => this.giveBackNow(from));
  }

  /** A unit for a mail of `kind`, from a block held or a new one; false when it must be taken one at a time. Call it in turn (inTurn). */
  async take(kind: string, now: Date): Promise<boolean> {
    // Yesterday's units go back to yesterday's count.
    if (utcDay(now) !== utcDay(this.heldSince)) await this.giveBackNow(now);
    if (kind === DIGEST_KIND) return false;
    if (isNotification(kind)) {
      if (this.shared > 0) {
        this.shared -= 1;
        return true;
      }
      // A plain notification may bring the count to one under the share: the last unit is the digest's.
      if (!(await this.reserve(now, notificationShare(this.cap) - 1))) return false;
      await this.keepRest(now, 'shared');
      return true;
    }
    if (this.requesterOnly > 0) {
      this.requesterOnly -= 1;
      return true;
    }
    if (this.shared > 0) {
      this.shared -= 1;
      return true;
    }
    if (!(await this.reserve(now, this.cap))) return false;
    await this.keepRest(now, 'requesterOnly');
    return true;
  }

  private async giveBackNow(from = this.heldSince): Promise<void> {
    const units = this.shared + this.requesterOnly;
    const day = this.heldSince;
    this.heldSince = from;
    this.shared = 0;
    this.requesterOnly = 0;
    await returnEmailCap(this.db, day, units);
  }

  /**
   * Keeps the rest of a block taken at `now` (one unit went to the mail that took it), unless the
   * day turned while the block was being taken: then it goes straight back.
   */
  private async keepRest(now: Date, pool: 'shared' | 'requesterOnly'): Promise<void> {
    if (utcDay(now) === utcDay(this.heldSince)) this[pool] += this.block - 1;
    else await returnEmailCap(this.db, now, this.block - 1);
  }

  private reserve(now: Date, limit: number): Promise<boolean> {
    if (limit - this.block * HEADROOM_BLOCKS < this.block) return Promise.resolve(false);
    return consumeEmailCapBlock(this.db, now, this.block, limit - this.block * HEADROOM_BLOCKS);
  }
}
