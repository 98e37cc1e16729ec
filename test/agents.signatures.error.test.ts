import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AGENTS_ENV, AGENTS_BASE as BASE, bothSignatures, type DirectoryServer, signedHeaders, type TestAgent, useAgents } from './support/agents.js';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Every way a Web Bot Auth signature can be wrong (docs/verified-agents.md): 400
 * invalid_signature with details ["signature: <reason>"], never 401, never WWW-Authenticate,
 * never a 500 or a hang. Each test moves the clock a minute on, past the one-fetch-a-minute bound
 * of the directory host.
 */

describe.each(STORES)('bad signatures on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock, env: AGENTS_ENV });
  const keys = useAgents(2, 1);
  const [agent, second, stranger] = keys.agents as [TestAgent, TestAgent, TestAgent];
  let directory: DirectoryServer;
  let defaultRespond: DirectoryServer['respond'];
  beforeAll(() => {
    directory = keys.directory;
    defaultRespond = directory.respond;
  });
  beforeEach(() => {
    clock.advance(61_000);
    directory.respond = defaultRespond;
  });

  const submit = (headers: Record<string, string>) => postJson(`${t.url}/api/v1/tasks`, validTask(), headers);
  const sign = (who: TestAgent, options: Parameters<typeof signedHeaders>[6] = {}, path = '/api/v1/tasks') =>
    signedHeaders(who, directory.url, BASE, 'POST', path, clock.now(), options);

  async function refused(res: Response, reason: RegExp): Promise<void> {
    const body = (await res.json()) as { error: string; details: string[] };
    expect(res.status).toBe(400);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(body.error).toBe('invalid_signature');
    expect(body.details).toHaveLength(1);
    expect(body.details[0]).toMatch(/^signature: /);
    expect(body.details[0]).toMatch(reason);
  }

  it('accepts the well-formed signature the others spoil', async () => {
    expect((await submit(await sign(agent))).status).toBe(202);
  });

  it('refuses a signature that is not base64', async () => {
    const headers = await sign(agent);
    await refused(await submit({ ...headers, signature: 'sig1=:not*base64!:' }), /structured field|Signature/);
  });

  it('refuses a signature that does not match (a flipped byte)', async () => {
    const headers = await sign(agent);
    const bytes = Buffer.from(headers.signature.slice(6, -1), 'base64');
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    await refused(await submit({ ...headers, signature: `sig1=:${bytes.toString('base64')}:` }), /verification failed/i);
  });

  it('refuses another algorithm', async () => {
    const headers = await sign(agent);
    await refused(
      await submit({ ...headers, 'signature-input': headers['signature-input'].replace('alg="ed25519"', 'alg="rsa-pss-sha512"') }),
      /rsa-pss-sha512/,
    );
  });

  it('refuses a key that is not in the directory', async () => {
    await refused(await submit(await sign(stranger)), /not in the agent's key directory/);
  });

  it('refuses a directory that is not JSON', async () => {
    directory.respond = (_request, response) => response.end('<html>hello</html>');
    await refused(await submit(await sign(agent, { signatureAgent: `${directory.url}/not-json` })), /not JSON/);
  });

  it('refuses an oversized directory', async () => {
    directory.respond = (_request, response) => response.end(JSON.stringify({ keys: [agent.publicJwk], pad: 'x'.repeat(70_000) }));
    await refused(await submit(await sign(agent, { signatureAgent: `${directory.url}/big` })), /over 65536 bytes/);
  });

  it('refuses a redirecting directory', async () => {
    directory.respond = (_request, response) => {
      response.writeHead(302, { location: `${directory.url}/elsewhere` });
      response.end();
    };
    await refused(await submit(await sign(agent, { signatureAgent: `${directory.url}/moved` })), /redirect/);
  });

  it('holds a slow directory at most 5 s', async () => {
    directory.respond = () => undefined;
    const started = Date.now();
    await refused(await submit(await sign(agent, { signatureAgent: `${directory.url}/slow` })), /did not answer within 5 s/);
    expect(Date.now() - started).toBeLessThan(6_500);
  }, 15_000);

  it('refuses a Signature-Agent that is not a URL', async () => {
    await refused(await submit(await sign(agent, { signatureAgent: 'not a url at all' })), /Signature-Agent/);
  });

  it('refuses created in the future and expires passed, beyond 30 s of skew', async () => {
    const now = clock.now().getTime();
    await refused(await submit(await sign(agent, { created: new Date(now + 120_000), expires: new Date(now + 180_000) })), /future/);
    await refused(await submit(await sign(agent, { created: new Date(now - 200_000), expires: new Date(now - 60_000) })), /expired/);
    // Within the skew: accepted.
    expect((await submit(await sign(agent, { created: new Date(now + 20_000), expires: new Date(now + 80_000) }))).status).toBe(202);
  });

  it('refuses a window over 300 s', async () => {
    const now = clock.now().getTime();
    await refused(await submit(await sign(agent, { created: new Date(now), expires: new Date(now + 301_000) })), /over 300 s/);
  });

  it('refuses a replayed nonce', async () => {
    const headers = await sign(agent);
    expect((await submit(headers)).status).toBe(202);
    await refused(await submit(headers), /replay/);
  });

  it('refuses a signature without the signature-agent component, or without the tag', async () => {
    const headers = await sign(agent);
    const input = headers['signature-input'];
    await refused(await submit({ ...headers, 'signature-input': input.replace(' "signature-agent"', '') }), /signature-agent/);
    await refused(await submit({ ...headers, 'signature-input': input.replace(';tag="web-bot-auth"', '') }), /tag/);
    await refused(await submit({ ...headers, 'signature-input': input.replace('"@authority" ', '') }), /@authority/);
  });

  it('refuses a signature over another @authority', async () => {
    await refused(await submit(await sign(agent, { signedBase: 'https://other-service.example' })), /verification failed/i);
  });

  describe('two signatures in one request: each must verify, by one key', () => {
    // The Dictionary form: each signature covers its own member of Signature-Agent (`;key=`).
    const twice = (first: TestAgent, then: TestAgent, agentField = `sig1="${directory.url}", sig2="${directory.url}"`) =>
      Promise.all([
        sign(first, { dictionary: true, agentField, member: 'sig1', label: 'sig1' }),
        sign(then, { dictionary: true, agentField, member: 'sig2', label: 'sig2' }),
      ]).then(([one, two]) => bothSignatures(one, two));

    it('accepts two by one key, each naming its own member', async () => {
      expect((await submit(await twice(agent, agent))).status).toBe(202);
    });

    it('refuses two where one is bad, whichever comes first', async () => {
      await refused(await submit(await twice(agent, stranger)), /not in the agent's key directory/);
      clock.advance(61_000);
      await refused(await submit(await twice(stranger, agent)), /not in the agent's key directory/);
      // The String form (web-bot-auth 0.1.x), both covering the whole field.
      const good = await sign(agent);
      const bad = await signedHeaders(stranger, directory.url, BASE, 'POST', '/api/v1/tasks', clock.now(), {});
      const relabel = (value: string) => value.replace(/^sig1=/, 'sig2=');
      await refused(
        await submit(bothSignatures(good, { ...bad, 'signature-input': relabel(bad['signature-input']), signature: relabel(bad.signature) })),
        /not in the agent's key directory/,
      );
    });

    it('refuses two good ones by different keys', async () => {
      await refused(await submit(await twice(agent, second)), /different keys/);
    });

    it('refuses a signature whose member is not in Signature-Agent', async () => {
      const headers = await sign(agent, { dictionary: true, agentField: `sig1="${directory.url}", sig3="${directory.url}"`, member: 'sig3' });
      await refused(await submit({ ...headers, 'signature-agent': `sig1="${directory.url}"` }), /no dictionary member sig3/);
    });

    it('refuses more than four', async () => {
      const five = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((label) => sign(agent, { dictionary: true, label })));
      await refused(await submit(five.reduce(bothSignatures)), /more than 4 signatures/);
    });
  });

  it('refuses Signature without Signature-Agent, and a lone Signature-Agent', async () => {
    const headers = await sign(agent);
    await refused(await submit({ signature: headers.signature, 'signature-input': headers['signature-input'] }), /Signature-Agent/);
    await refused(await submit({ 'signature-agent': headers['signature-agent'] }), /both required/);
  });

  it('fetches a directory host at most once a minute, whatever the paths', async () => {
    const before = directory.requests.length;
    const answers: number[] = [];
    // Reads, 50 at a time (the connection cap per address is 100).
    for (let batch = 0; batch < 20; batch++) {
      const statuses = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const headers = await signedHeaders(agent, `${directory.url}/agents/${batch * 50 + i}`, BASE, 'GET', '/api/v1/services', clock.now());
          return (await fetch(`${t.url}/api/v1/services`, { headers })).status;
        }),
      );
      answers.push(...statuses);
    }
    expect(directory.requests.length - before).toBeLessThanOrEqual(2);
    expect([...new Set(answers)].sort()).toEqual([200, 400]);
  }, 60_000);
});

describe('a directory on a private address, with the SSRF guard on', () => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ clock, env: { BASE_URL: BASE } });
  const keys = useAgents(1);

  it('refuses it without fetching', async () => {
    const agent = keys.agents[0] as TestAgent;
    const headers = await signedHeaders(agent, keys.directory.url.replace('http:', 'https:'), BASE, 'POST', '/api/v1/tasks', clock.now());
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(), headers);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { details: string[] };
    expect(body.details[0]).toMatch(/^signature: the key directory .* is refused: refused: the host is, or resolves to, a loopback/);
    expect(keys.directory.requests).toHaveLength(0);
  });
});
