import type { Source } from './task.js';

/** Who is calling, whichever door they came in by. */
export interface Caller {
  /** HMAC of the client address (IPv4 /32, IPv6 /64); the address itself is never stored. */
  clientHash: string;
  /** Keyed hashes of the networks the client is in that an ip block may name (domain/client.ts clientKeys). */
  networkHashes?: readonly string[] | undefined;
  source: Source;
  idempotencyKey?: string | undefined;
}
