import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SUBMIT_ROUTE } from '../routes/public.js';

/**
 * Submissions wait their turn behind everything else while other requests are arriving.
 *
 * A submission is the service's most expensive request: validation, the guards, and its share of a
 * group commit (services/tasks/group-commit.ts), whose transaction runs on the event loop on SQLite.
 * When a flood of them arrives together, the framework used to take them all at once, and a status
 * read or a console page that arrived meanwhile waited for the whole batch to be handled and
 * committed (read p99 85–107 ms, console 130–150 ms during a flood on a 2-core machine,
 * docs/performance.md).
 *
 * Here a submission (`POST /api/v1/tasks`) is held before the framework sees it, and the held ones
 * go on `PER_TURN` at a time, one group per turn of the event loop (setImmediate), so that the
 * requests that arrive in between are handled first. Only while other requests are arriving: when
 * none came since the oldest held submission arrived, nor in the `QUIET_MS` before it, every held
 * submission goes on at once, and a flood of submissions alone reaches the group commit whole (which
 * cuts it into batches of its own size, services/tasks/group-commit.ts).
 *
 * Nothing is refused or reordered among submissions (first held, first on), and the wait is
 * bounded: the held ones are at most the open connections times the requests one connection may
 * have waiting (slow-clients.ts MAX_PIPELINED), and they go on at `PER_TURN` a turn; a turn comes
 * however busy the loop is. Submissions through MCP (`POST /mcp`, shared with every other MCP call)
 * and the web form are not held.
 */

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

interface Held {
  request: IncomingMessage;
  response: ServerResponse;
  /** When it arrived (performance.now()). */
  at: number;
}

/** Submissions let on per turn while others are waiting (docs/performance.md: 4–16 measured). */
export const PER_TURN = 8;
/** Submissions that arrive within this long after another request are let on `PER_TURN` at a time. */
export const QUIET_MS = 1000;

/** Entries let on before the held queue drops them (when they are also at least half of it). */
const COMPACT_AFTER = 1024;

function isSubmission(request: IncomingMessage): boolean {
  if (request.method !== 'POST') return false;
  const url = request.url ?? '';
  // A dry run is a read: it goes straight on.
  return url === SUBMIT_ROUTE || (url.startsWith(SUBMIT_ROUTE) && url[SUBMIT_ROUTE.length] === '?' && !url.includes('dry_run=true'));
}

/** Wraps the server's request listener: submissions are held as above, the rest go straight on. */
export function holdSubmissions(next: Listener): Listener {
  // A queue: held[first] is the oldest still held. Letting some on moves `first` instead of
  // shifting the array (a splice from the front moves every entry behind it, each turn).
  let held: Held[] = [];
  let first = 0;
  let scheduled = false;
  let lastOther = Number.NEGATIVE_INFINITY;

  const release = (): void => {
    // Others are arriving if one came since, or shortly before, the oldest held submission: judged
    // by arrival, not by now, so a flood that takes longer than QUIET_MS to let on stays in turns.
    const othersArriving = lastOther > (held[first]?.at ?? 0) - QUIET_MS;
    const end = othersArriving ? Math.min(held.length, first + PER_TURN) : held.length;
    const going = held.slice(first, end);
    first = end;
    if (first === held.length) {
      held = [];
      first = 0;
    } else if (first >= COMPACT_AFTER && first * 2 >= held.length) {
      held = held.slice(first);
      first = 0;
    }
    for (const { request, response } of going) next(request, response);
    scheduled = held.length > first;
    if (scheduled) setImmediate(release);
  };

  return (request, response) => {
    if (!isSubmission(request)) {
      lastOther = performance.now();
      next(request, response);
      return;
    }
    held.push({ request, response, at: performance.now() });
    if (scheduled) return;
    scheduled = true;
    setImmediate(release);
  };
}
