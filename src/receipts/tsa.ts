import { createHash, randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/**
 * Trusted time for the receipt log (RFC 3161, docs/receipt-log.md): a TimeStampReq over the
 * SHA-256 of a checkpoint as served, and the TimeStampResp checked before anything keeps it — its
 * status, nonce, message imprint and signature (pkijs), and its chain against the TSA_CA_FILE
 * certificates when given. A TSA that hangs, answers garbage or signs another hash is an error
 * here, never a token.
 */

const SHA256_OID = '2.16.840.1.101.3.4.2.1';

/** The certificates of a PEM file (TSA_CA_FILE). */
export function parsePemCertificates(pem: string): pkijs.Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => {
    const der = Buffer.from(block.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
    return pkijs.Certificate.fromBER(new Uint8Array(der));
  });
}

/** Asks `url` for a time-stamp token over SHA-256(data); returns the checked TimeStampResp (DER). */
export async function requestTimestamp(url: string, data: Uint8Array, options: { timeoutMs: number; trusted: pkijs.Certificate[] }): Promise<Buffer> {
  const nonce = randomBytes(8);
  nonce[0] = (nonce[0] ?? 0) & 0x7f; // a positive INTEGER
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: SHA256_OID }),
      hashedMessage: new asn1js.OctetString({ valueHex: createHash('sha256').update(data).digest() }),
    }),
    nonce: new asn1js.Integer({ valueHex: nonce }),
    certReq: true,
  });
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/timestamp-query' },
    body: new Uint8Array(request.toSchema().toBER()),
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  if (res.status !== 200) throw new Error(`the TSA answered HTTP ${res.status}`);
  const der = Buffer.from(await res.arrayBuffer());
  await checkTimestamp(der, data, options.trusted, nonce);
  return der;
}

/** Checks a TimeStampResp over `data`; throws saying what is wrong. */
export async function checkTimestamp(der: Uint8Array, data: Uint8Array, trusted: pkijs.Certificate[], nonce?: Buffer): Promise<void> {
  let response: pkijs.TimeStampResp;
  try {
    response = pkijs.TimeStampResp.fromBER(new Uint8Array(der));
  } catch {
    throw new Error('the TSA answered something that is not a TimeStampResp');
  }
  const status = response.status.status;
  if (status !== 0 && status !== 1) throw new Error(`the TSA refused (PKIStatus ${status})`);
  if (!response.timeStampToken) throw new Error('the TSA answered no token');
  const signed = new pkijs.SignedData({ schema: response.timeStampToken.content });
  const content = signed.encapContentInfo.eContent;
  if (!content) throw new Error('the token holds no TSTInfo');
  const info = pkijs.TSTInfo.fromBER(content.getValue());
  if (nonce && (!info.nonce || !Buffer.from(info.nonce.valueBlock.valueHexView).equals(nonce))) throw new Error('the token answers another request (nonce)');
  const imprint = Buffer.from(info.messageImprint.hashedMessage.valueBlock.valueHexView);
  if (info.messageImprint.hashAlgorithm.algorithmId !== SHA256_OID || !imprint.equals(createHash('sha256').update(data).digest())) {
    throw new Error('the token signs another hash than the checkpoint');
  }
  let ok = false;
  try {
    // SignedData.verify, which TimeStampResp.verify calls, checks the chain only when asked to.
    const result: unknown = await signed.verify({ signer: 0, data: new Uint8Array(data).buffer, trustedCerts: trusted, checkChain: trusted.length > 0 });
    ok = result === true;
  } catch (error) {
    throw new Error(`the token does not verify: ${(error as { message?: string }).message ?? String(error)}`);
  }
  if (!ok) throw new Error('the token does not verify');
}
