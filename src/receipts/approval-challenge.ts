// TEMPORARY stand-in until the verifiers' module lands on main (it replaces this file at the merge).
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { canonicalJson } from '../domain/canonical.js';

export interface ApprovalSubject {
  task_id: string;
  request_sha256: string;
  deliverable_sha256: string;
}

export function approvalChallenge(subject: ApprovalSubject): Uint8Array {
  const json = canonicalJson({ task_id: subject.task_id, request_sha256: subject.request_sha256, deliverable_sha256: subject.deliverable_sha256 });
  return new Uint8Array(createHash('sha256').update(json, 'utf8').digest());
}

export async function jwkThumbprint(jwk: JWK): Promise<string> {
  return calculateJwkThumbprint(jwk, 'sha256');
}
