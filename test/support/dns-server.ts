import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

/**
 * A tiny authoritative-for-everything DNS server on 127.0.0.1 (UDP), so no suite touches the real
 * network or waits for a resolver timeout. Answers by the queried name:
 *
 * - contains `nxdomain`  → NXDOMAIN
 * - contains `servfail`  → SERVFAIL
 * - contains `timeout`   → never answers (the resolver times out)
 * - contains `null-mx`   → MX 0 "." (RFC 7505 null MX)
 * - contains `a-only`    → no MX, an A record (RFC 5321 implicit MX)
 * - contains `no-records`→ the name exists but has no MX, A or AAAA record
 * - starts `ip-a-b-c-d.` → an A record a.b.c.d (webhook SSRF tests: a name resolving to 10.1.2.3 …)
 * - contains `slow`      → as below, but answered after SLOW_ANSWER_MS (look-ups still under way)
 * - anything else        → MX 10 mx.<name>, and an A record
 */

const TYPE_A = 1;
const TYPE_MX = 15;
const TYPE_AAAA = 28;
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;
/** How long a `slow` name takes to answer. */
export const SLOW_ANSWER_MS = 300;

export interface DnsQuery {
  name: string;
  type: number;
}

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, ready for DNS_SERVERS. */
  address: string;
  port: number;
  /** Every query received, in order (tests assert on caching with it). */
  queries: DnsQuery[];
  close(): Promise<void>;
}

interface Question {
  name: string;
  type: number;
  /** Bytes of the question section, echoed back. */
  raw: Buffer;
}

function parseQuestion(msg: Buffer): Question | null {
  if (msg.length < 12 || msg.readUInt16BE(4) < 1) return null;
  const labels: string[] = [];
  let offset = 12;
  while (offset < msg.length) {
    const length = msg[offset]!;
    if (length === 0) break;
    if (length > 63) return null; // no compression in questions we accept
    labels.push(msg.toString('latin1', offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  if (offset + 5 > msg.length) return null;
  const type = msg.readUInt16BE(offset + 1);
  return { name: labels.join('.').toLowerCase(), type, raw: msg.subarray(12, offset + 5) };
}

function encodeName(name: string): Buffer {
  const parts = name.split('.').filter((p) => p.length > 0);
  return Buffer.concat([...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p, 'latin1')])), Buffer.from([0])]);
}

function record(type: number, rdata: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // pointer to the question's name
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4); // class IN
  head.writeUInt32BE(300, 6); // TTL
  head.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([head, rdata]);
}

function mx(preference: number, exchange: string): Buffer {
  const pref = Buffer.alloc(2);
  pref.writeUInt16BE(preference, 0);
  return record(TYPE_MX, Buffer.concat([pref, encodeName(exchange)]));
}

function answersFor(q: Question): { rcode: number; answers: Buffer[] } | null {
  const { name, type } = q;
  if (name.includes('timeout')) return null;
  if (name.includes('nxdomain')) return { rcode: RCODE_NXDOMAIN, answers: [] };
  if (name.includes('servfail')) return { rcode: RCODE_SERVFAIL, answers: [] };
  const literal = /^ip-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})\./.exec(name);
  if (literal) return { rcode: 0, answers: type === TYPE_A ? [record(TYPE_A, Buffer.from(literal.slice(1, 5).map(Number)))] : [] };
  const a = record(TYPE_A, Buffer.from([192, 0, 2, 10]));
  if (name.includes('no-records')) return { rcode: 0, answers: [] };
  if (name.includes('null-mx')) return { rcode: 0, answers: type === TYPE_MX ? [mx(0, '')] : [] };
  if (name.includes('a-only')) return { rcode: 0, answers: type === TYPE_A ? [a] : [] };
  if (type === TYPE_MX) return { rcode: 0, answers: [mx(10, `mx.${name}`)] };
  if (type === TYPE_A) return { rcode: 0, answers: [a] };
  if (type === TYPE_AAAA) return { rcode: 0, answers: [] };
  return { rcode: 0, answers: [] };
}

function respond(query: Buffer, q: Question, rcode: number, answers: Buffer[]): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // id
  const rd = query.readUInt16BE(2) & 0x0100;
  header.writeUInt16BE(0x8000 | 0x0400 | rd | 0x0080 | rcode, 2); // QR, AA, RD echoed, RA
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  return Buffer.concat([header, q.raw, ...answers]);
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const socket: Socket = createSocket('udp4');
  const queries: DnsQuery[] = [];
  socket.on('message', (msg: Buffer, rinfo: RemoteInfo) => {
    const q = parseQuestion(msg);
    if (!q) return;
    queries.push({ name: q.name, type: q.type });
    const answer = answersFor(q);
    if (!answer) return;
    const send = () => socket.send(respond(msg, q, answer.rcode, answer.answers), rinfo.port, rinfo.address);
    if (q.name.includes('slow')) setTimeout(send, SLOW_ANSWER_MS).unref();
    else send();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  socket.unref(); // never keeps a test worker alive
  const port = socket.address().port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

let shared: Promise<TestDnsServer> | undefined;

/** One server per test worker, started on first use; startTestApp points DNS_SERVERS at it. */
export function sharedDnsServer(): Promise<TestDnsServer> {
  shared ??= startDnsServer();
  return shared;
}
