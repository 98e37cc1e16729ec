import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { QUIET_MS } from '../src/http/lanes/submission-lane.js';
import { SQLITE_MAX_BATCH } from '../src/services/tasks/group-commit.js';
import { postJson, STORES, type TestApp, useTestApp, validTask } from './support/app.js';

/**
 * Submissions wait their turn behind other requests while those arrive (src/http/submission-lane.ts).
 * The client here shares the service's event loop, so what it sees is ordered by the loop's turns:
 * each response is stamped with the turn (a setImmediate counter) in which it arrived.
 */

const FLOOD = 128;

interface Arrival {
  /** Which request this was (the submission's index, -1 for the read sent during the flood). */
  index: number;
  status: number;
  turn: number;
}

function open(t: TestApp): Promise<Socket> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

function submissionBytes(n: number): string {
  const body = JSON.stringify(
    validTask({ delivery: 'status_poll', contact_email: undefined, description: `Flood ${n} ${Math.random()}: count the benches in the park.` }),
  );
  return `POST /api/v1/tasks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const readBytes = (taskId: string) => `GET /api/v1/tasks/${taskId} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`;

/** Counts turns of the event loop until stopped. */
function turnCounter(): { now: () => number; stop: () => void } {
  let turn = 0;
  let running = true;
  const tick = () => {
    turn++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => turn, stop: () => (running = false) };
}

/** Resolves once the socket's first response arrives, recorded with its status and turn. */
function firstResponse(socket: Socket, index: number, turns: { now: () => number }, arrivals: Arrival[]): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => {
      arrivals.push({ index, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0), turn: turns.now() });
      resolve();
    });
    socket.once('error', reject);
  });
}

async function flood(t: TestApp, taskId: string, options: { readBefore: boolean; readOnFirst: boolean }): Promise<Arrival[]> {
  const sockets = await Promise.all(Array.from({ length: FLOOD }, () => open(t)));
  const [before, during] = [await open(t), await open(t)];
  // Connected is not yet accepted: let the server take every connection first, so that the flood's
  // requests arrive together (the server accepts and reads in separate turns).
  await new Promise((r) => setTimeout(r, 200));
  const arrivals: Arrival[] = [];
  const turns = turnCounter();
  try {
    const done = sockets.map((socket, i) => firstResponse(socket, i, turns, arrivals));
    const read = firstResponse(during, -1, turns, arrivals);
    // A read answered just before the flood: other requests are arriving, so submissions go on in
    // turns. (Its answer is awaited: sent beside the flood, it could be read after the flood went on.)
    if (options.readBefore) {
      const answered = firstResponse(before, -2, turns, []);
      before.write(readBytes(taskId));
      await answered;
    }
    sockets.forEach((socket, i) => socket.write(submissionBytes(i)));
    if (options.readOnFirst) {
      await Promise.race(done);
      during.write(readBytes(taskId));
      await read;
    }
    await Promise.all(done);
  } finally {
    turns.stop();
    for (const socket of [...sockets, before, during]) socket.destroy();
  }
  return arrivals;
}

describe.each(STORES)('submissions wait behind other requests (%s)', (store) => {
  // The flood's connections all come from 127.0.0.1.
  const t = useTestApp({ store, env: { MAX_CONNECTIONS_PER_ADDRESS: '1000' } });

  async function aTask(): Promise<string> {
    const created = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    expect(created.status).toBe(202);
    return ((await created.json()) as { task_id: string }).task_id;
  }

  it('a read sent while a flood of submissions is being handled overtakes most of it', async () => {
    const taskId = await aTask();
    const arrivals = await flood(t, taskId, { readBefore: true, readOnFirst: true });
    const submissions = arrivals.filter((a) => a.index >= 0);
    expect(submissions.map((a) => a.status)).toEqual(Array(FLOOD).fill(202));
    const readAt = arrivals.findIndex((a) => a.index === -1);
    expect(arrivals[readAt]?.status).toBe(200);
    // Before the lane the framework took the whole flood in one turn and answered all of it
    // before it read the next request: the read came after every submission.
    expect(readAt).toBeLessThan(FLOOD / 2);
  });

  it.runIf(store === 'sqlite')('a flood with nothing else arriving goes on at once, committed in batches of 16 a turn', async () => {
    const taskId = await aTask();
    await new Promise((r) => setTimeout(r, QUIET_MS + 50));
    const arrivals = await flood(t, taskId, { readBefore: false, readOnFirst: false });
    expect(arrivals.map((a) => a.status)).toEqual(Array(FLOOD).fill(202));
    // The lane lets the whole flood on at once; the group commit then takes SQLITE_MAX_BATCH a
    // batch, with a turn of the loop between two (services/group-commit.ts). Before that cap the
    // flood was answered in one or two turns, in batches of up to 128.
    const perTurn = new Map<number, number>();
    for (const { turn } of arrivals) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(SQLITE_MAX_BATCH);
    expect(perTurn.size).toBeLessThanOrEqual(FLOOD / SQLITE_MAX_BATCH + 1);
  });
});
