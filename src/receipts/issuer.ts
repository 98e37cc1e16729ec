/**
 * The `iss` of a compact JWS receipt, read without verifying it (display only: the status page
 * says when a receipt was issued by another deployment, e.g. one carried over by the import).
 * Null when the payload cannot be read.
 */
export function receiptIssuer(receipt: string): string | null {
  const payload = receipt.split('.')[1];
  if (payload === undefined) return null;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const iss = typeof claims === 'object' && claims !== null ? (claims as { iss?: unknown }).iss : undefined;
    return typeof iss === 'string' ? iss : null;
  } catch {
    return null;
  }
}
