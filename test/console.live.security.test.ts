import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { submit } from './operator.support.js';
import { STORES, startTestApp, type TestApp, TestClock, useTestApp } from './support/app.js';

/** An open /operator/events stream, read as text as it arrives. */
interface Stream {
  /** Everything received so far. */
  text(): string;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  cancel(): Promise<void>;
}

async function openStream(t: TestApp, cookie: string): Promise<Stream> {
  const res = await fetch(`${t.url}/operator/events`, { headers: { cookie } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let received = '';
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      received += decoder.decode(value, { stream: true });
    }
  })();
  return { text: () => received, ended, cancel: () => reader.cancel().catch(() => undefined) };
}

async function waitFor(condition: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function endsWithin(stream: Stream, ms: number): Promise<boolean> {
  return Promise.race([stream.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

describe.each(STORES)('the live console stream ends with its session (%s)', (store) => {
  const clock = new TestClock(new Date());
  const t = useTestApp({ store, clock });

  it('signing out ends that session’s open streams at once, and only those', async () => {
    const mine = await signIn(t);
    const other = await signIn(t);
    const stream = await openStream(t, mine.cookie);
    const others = await openStream(t, other.cookie);
    await waitFor(() => stream.text().includes('event: hello') && others.text().includes('event: hello'));

    expect((await postForm(t, '/operator/logout', { _csrf: mine.csrf }, mine.cookie)).status).toBe(303);
    expect(await endsWithin(stream, 2_000)).toBe(true);

    // The other session's stream stays open and still carries changes.
    const id = await submit(t);
    await waitFor(() => others.text().includes(id));
    expect(stream.text()).not.toContain(id);
    await others.cancel();
  });

  it('a stream whose session was signed out on another instance carries no further change, and ends', async () => {
    const second = await startTestApp({ shareDatabaseWith: t, clock });
    try {
      const { cookie } = await signIn(t);
      const stream = await openStream(t, cookie);
      await waitFor(() => stream.text().includes('event: hello'));
      // Signed out through the second instance: the first learns of it only from the store.
      const page = await (await fetch(`${second.url}/operator`, { headers: { cookie } })).text();
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
      expect((await postForm(second, '/operator/logout', { _csrf: csrf }, cookie)).status).toBe(303);

      // The next change on the first instance: it checks the session before sending it.
      const id = await submit(t);
      expect(await endsWithin(stream, 3_000)).toBe(true);
      expect(stream.text()).not.toContain(id);
      expect(stream.text()).not.toContain('event: change');
    } finally {
      await second.close();
    }
  });

  it('a stream whose session expired carries no further change, and ends', async () => {
    const { cookie } = await signIn(t);
    const stream = await openStream(t, cookie);
    await waitFor(() => stream.text().includes('event: hello'));
    clock.advance(13 * 3600 * 1000);
    try {
      const id = await submit(t);
      expect(await endsWithin(stream, 3_000)).toBe(true);
      expect(stream.text()).not.toContain(id);
    } finally {
      clock.set(new Date());
    }
  });

  it('a stream of a signed-in session keeps carrying changes', async () => {
    const { cookie } = await signIn(t);
    const stream = await openStream(t, cookie);
    await waitFor(() => stream.text().includes('event: hello'));
    const first = await submit(t);
    const second = await submit(t);
    await waitFor(() => stream.text().includes(first) && stream.text().includes(second));
    expect(await endsWithin(stream, 200)).toBe(false);
    await stream.cancel();
  });
});
