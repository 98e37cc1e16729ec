import type { Source } from './tasks/task.js';

/** Who is calling, whichever door they came in by. */
export interface Caller {
  /** HMAC of the client address (IPv4 /32, IPv6 /64); the address itself is never stored. */
  clientHash: string;
  /** Keyed hashes of the networks the client is in, for ip blocks that name a network. */
  networks?: NetworkHashes | undefined;
  source: Source;
  idempotencyKey?: string | undefined;
  /** The A2A context a new task joins (a contextId the service issued); a new one when undefined (docs/a2a.md). */
  contextId?: string | undefined;
  /**
   * The agent whose Web Bot Auth signature the request carried and the service verified
   * (docs/verified-agents.md); then `clientHash` is the hash of `key:<key_id>`, not of the address.
   */
  agent?: VerifiedAgent | undefined;
}

/** An agent that proved who it is with an HTTP Message Signature (RFC 9421, Web Bot Auth). */
export interface VerifiedAgent {
  /** The RFC 7638 thumbprint of its Ed25519 key (the signature's `keyid`). */
  keyId: string;
  /** The host of its key directory, with `:port` when not the scheme's default. */
  directory: string;
}

/** The keyed hashes of a client's enclosing networks, worked out only for the prefixes asked for. */
export interface NetworkHashes {
  /** The hash of the enclosing network of `prefix` bits, or undefined when no block can name it. */
  at(prefix: number): string | undefined;
  /** The hash of every enclosing network a block may name (for entries whose prefix is not known). */
  all(): readonly string[];
}
