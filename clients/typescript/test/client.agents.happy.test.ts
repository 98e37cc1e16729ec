import { verifySignature, webcrypto } from 'http-message-sig';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DirectoryServer, newAgent, startDirectory, type TestAgent } from '../../../test/support/agents.js';
import { STORES, TestClock, useTestApp, validTask } from '../../../test/support/app.js';
import { HumanTaskClient, jwkThumbprint, type TaskInput } from '../src/index.js';

/**
 * The client signs its requests when given a key (Web Bot Auth, docs/verified-agents.md): the real
 * app gives it the verified tier, and the peer library (http-message-sig, by the drafts' author)
 * verifies what it sends.
 */

/** A client for `agent`, and every request it sends with every answer's headers. */
async function signingClient(t: { url: string; config: { baseUrl: string } }, agent: TestAgent & { privateJwk: JsonWebKey }, directory: string) {
  const sent: { url: string; method: string; headers: Headers }[] = [];
  const answers: Headers[] = [];
  const client = new HumanTaskClient({
    baseUrl: t.url,
    issuer: t.config.baseUrl,
    agent: { key: agent.privateJwk as Record<string, unknown>, directory },
    fetch: async (input, init) => {
      sent.push({ url: String(input), method: init?.method ?? 'GET', headers: new Headers(init?.headers) });
      const response = await fetch(input, init);
      answers.push(response.headers);
      return response;
    },
  });
  return { client, sent, answers };
}

async function agentWithPrivateJwk(): Promise<TestAgent & { privateJwk: JsonWebKey }> {
  const agent = await newAgent();
  return { ...agent, privateJwk: await crypto.subtle.exportKey('jwk', agent.privateKey) };
}

describe.each(STORES)('a signing client against the real app (%s)', (store) => {
  // The client signs with the real time: the app's clock starts there.
  const t = useTestApp({
    store,
    clock: new TestClock(new Date().toISOString()),
    limits: 'production',
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', BASE_URL: 'http://localhost:8080' },
  });
  let directory: DirectoryServer;
  let agent: TestAgent & { privateJwk: JsonWebKey };

  beforeAll(async () => {
    agent = await agentWithPrivateJwk();
    directory = await startDirectory([agent]);
  });
  afterAll(async () => directory.close());

  it('gets the verified tier, and signs each request anew', async () => {
    const { client, sent, answers } = await signingClient(t, agent, directory.url);
    const submission = await client.submitTask(validTask() as TaskInput & Record<string, unknown>);
    expect(submission.status).toBe('submitted');
    expect(answers.at(-1)?.get('ratelimit-policy')).toBe('20;w=3600;comment="verified", 100;w=86400;comment="verified"');
    await client.getTask(submission.task_id);
    expect(answers.at(-1)?.get('ratelimit-policy')).toBe('600;w=60;comment="verified"');
    expect(sent.length).toBe(2);
    expect(sent[0]?.headers.get('signature-agent')).toBe(`"${directory.url}"`);
    expect(sent[0]?.headers.get('signature-input')).not.toBe(sent[1]?.headers.get('signature-input'));
    expect(sent[0]?.headers.get('signature-input')).toContain(`keyid="${agent.keyId}"`);
    expect(await jwkThumbprint(agent.publicJwk as Record<string, unknown>)).toBe(agent.keyId);
  });

  it('an unsigned client from the same address keeps the address tier', async () => {
    const answers: Headers[] = [];
    const client = new HumanTaskClient({
      baseUrl: t.url,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        answers.push(response.headers);
        return response;
      },
    });
    await client.getTask('00000000-0000-0000-0000-000000000000').catch(() => undefined);
    expect(answers[0]?.get('ratelimit-policy')).toBe('600;w=60;comment="address"');
  });
});

describe('a signing client, checked by the peer library', () => {
  it('http-message-sig verifies its signature (tag, window, @authority of the issuer, signature-agent)', async () => {
    const agent = await agentWithPrivateJwk();
    const sent: Headers[] = [];
    const client = new HumanTaskClient({
      baseUrl: 'http://127.0.0.1:9',
      issuer: 'https://tasks.example.org',
      maxRetries: 0,
      agent: { key: agent.privateJwk as Record<string, unknown>, directory: 'https://agent.example' },
      fetch: async (_input, init) => {
        sent.push(new Headers(init?.headers));
        return new Response('{"task_id":"t","status":"submitted"}', { status: 202, headers: { 'content-type': 'application/json' } });
      },
    });
    await client.submitTask(validTask() as TaskInput & Record<string, unknown>);
    const headers = sent[0] as Headers;
    const fields = [...headers].map(([name, value]) => ({ name, value }));
    const publicKey = await crypto.subtle.importKey('jwk', agent.publicJwk, { name: 'Ed25519' }, false, ['verify']);
    const verified = await verifySignature(
      { kind: 'request', method: 'POST', targetUri: 'https://tasks.example.org/api/v1/tasks', fields },
      {
        policy: {
          algorithms: ['ed25519'],
          requiredComponents: ['@authority', 'signature-agent'],
          requiredParameters: ['created', 'expires', 'keyid', 'nonce', 'tag'],
        },
        resolveVerifier: () => webcrypto.verifier(publicKey),
      },
    );
    expect(verified.parameters).toMatchObject({ tag: 'web-bot-auth', keyid: agent.keyId, alg: 'ed25519' });
    expect(Number(verified.parameters.expires) - Number(verified.parameters.created)).toBe(60);
    expect(headers.get('signature-agent')).toBe('"https://agent.example"');

    // Another authority: the peer refuses it.
    await expect(
      verifySignature(
        { kind: 'request', method: 'POST', targetUri: 'https://elsewhere.example.org/api/v1/tasks', fields },
        { policy: { algorithms: ['ed25519'], requiredComponents: [], requiredParameters: [] }, resolveVerifier: () => webcrypto.verifier(publicKey) },
      ),
    ).rejects.toThrow();
  });
});
