import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback Web Push service for the push suites: it accepts what a real push service accepts
 * (RFC 8030 POST with a VAPID Authorization header, RFC 8292) and, playing the browser, decrypts
 * the aes128gcm payload (RFC 8188, RFC 8291) with the subscription's own keys. Each subscription
 * is a path on the stub; a path can be told to answer 410 Gone.
 */

export interface TestSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface ReceivedPush {
  path: string;
  /** The decrypted payload. */
  payload: unknown;
  vapid: { aud: string; exp: number; sub: string; publicKey: string };
  headers: IncomingMessage['headers'];
}

export interface TestPushService {
  url: string;
  received: ReceivedPush[];
  rejected: string[];
  /** A new browser subscription (fresh P-256 key pair and auth secret) at a path of this stub. */
  subscription(name: string): TestSubscription;
  /** Answer 410 Gone at this path from now on. */
  gone(name: string): void;
  waitFor(count: number, match?: (push: ReceivedPush) => boolean, timeoutMs?: number): Promise<ReceivedPush[]>;
  close(): Promise<void>;
}

function b64url(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/** Checks `vapid t=<JWT>, k=<key>`: ES256 over the JWT with the key it names. */
function checkVapid(header: string | undefined, origin: string): ReceivedPush['vapid'] {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!m) throw new Error(`no VAPID authorization: ${header ?? '(none)'}`);
  const [, token = '', key = ''] = m;
  const [head = '', body = '', signature = ''] = token.split('.');
  const raw = Buffer.from(key, 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('VAPID key is not an uncompressed P-256 point');
  const publicKey = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64url(raw.subarray(1, 33)), y: b64url(raw.subarray(33)) }, format: 'jwk' });
  const ok = verify('sha256', Buffer.from(`${head}.${body}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!ok) throw new Error('VAPID JWT signature does not verify');
  const header_ = JSON.parse(Buffer.from(head, 'base64url').toString()) as { alg: string };
  if (header_.alg !== 'ES256') throw new Error(`VAPID JWT alg ${header_.alg}`);
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as { aud: string; exp: number; sub: string };
  if (claims.aud !== origin) throw new Error(`VAPID aud ${claims.aud} is not ${origin}`);
  if (claims.exp * 1000 < Date.now() || claims.exp * 1000 > Date.now() + 24 * 3600_000 + 60_000) throw new Error('VAPID exp out of range');
  if (!/^(mailto:|https:)/.test(claims.sub)) throw new Error(`VAPID sub ${claims.sub}`);
  return { ...claims, publicKey: key };
}

/** RFC 8291: decrypts an aes128gcm body as the browser holding `ua` and `auth` would. */
function decrypt(body: Buffer, ua: ReturnType<typeof createECDH>, auth: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20] ?? 0;
  const asPublic = body.subarray(21, 21 + idlen);
  const records = body.subarray(21 + idlen);
  if (records.length > rs) throw new Error('more than one record');
  const secret = ua.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ua.getPublicKey(), asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', secret, auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(records.subarray(records.length - 16));
  const plain = Buffer.concat([decipher.update(records.subarray(0, records.length - 16)), decipher.final()]);
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end -= 1;
  if (plain[end] !== 2) throw new Error('last record lacks the 0x02 delimiter');
  return plain.subarray(0, end);
}

export async function startPushService(): Promise<TestPushService> {
  const browsers = new Map<string, { ua: ReturnType<typeof createECDH>; auth: Buffer }>();
  const goneNames = new Set<string>();
  const received: ReceivedPush[] = [];
  const rejected: string[] = [];
  let origin = '';
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const name = (request.url ?? '').replace(/^\/push\//, '');
      try {
        if (request.method !== 'POST') throw new Error(`method ${request.method}`);
        if (goneNames.has(name)) {
          response.writeHead(410).end();
          return;
        }
        const browser = browsers.get(name);
        if (!browser) throw new Error(`unknown subscription ${name}`);
        if (request.headers['content-encoding'] !== 'aes128gcm') throw new Error(`content-encoding ${String(request.headers['content-encoding'])}`);
        if (!/^\d+$/.test(String(request.headers.ttl ?? ''))) throw new Error('no TTL');
        const vapid = checkVapid(request.headers.authorization, origin);
        const payload = JSON.parse(decrypt(Buffer.concat(chunks), browser.ua, browser.auth).toString('utf8')) as unknown;
        received.push({ path: request.url ?? '', payload, vapid, headers: request.headers });
        response.writeHead(201, { Location: `${origin}/message/${randomBytes(4).toString('hex')}` }).end();
      } catch (error) {
        rejected.push(error instanceof Error ? error.message : String(error));
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    received,
    rejected,
    subscription(name) {
      const ua = createECDH('prime256v1');
      ua.generateKeys();
      const auth = randomBytes(16);
      browsers.set(name, { ua, auth });
      return { endpoint: `${origin}/push/${name}`, keys: { p256dh: b64url(ua.getPublicKey()), auth: b64url(auth) } };
    },
    gone(name) {
      goneNames.add(name);
    },
    async waitFor(count, match = () => true, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.filter(match);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${count} push(es), got ${found.length}; rejected: ${rejected.join('; ')}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
