import { fromBase64, utf8 } from './encoding.js';

/**
 * An RFC 3161 TimeStampResp checked in full on WebCrypto alone (docs/receipt-log.md, "Verifying"):
 * its status, that its message imprint is SHA-256 of the data, that the CMS SignedData's
 * signed attributes carry the hash of the TSTInfo (messageDigest) and name the signer's
 * certificate (ESSCertID or ESSCertIDv2), that the signature over those attributes verifies with
 * that certificate's key (RSA PKCS#1 v1.5 or PSS, ECDSA P-256/P-384/P-521), that the certificate
 * may time-stamp (extendedKeyUsage timeStamping, critical, alone, as RFC 3161 section 2.3 says)
 * and, given trusted certificates, that it chains to one of them, every certificate valid at the
 * token's time. The package keeps no dependency, so the DER is read here: strict definite
 * lengths, every element bounded by its parent, nothing re-encoded but the one re-tagging CMS
 * asks for (the signed attributes are signed as a SET).
 */

export interface TimestampVerdict {
  /** The TSA's time (genTime), as written in the token. */
  genTime: string;
  /** The signer certificate's subject common name (or "the TSA"). */
  signer: string;
  /** Whether the signer chains to a certificate the caller trusts. */
  chained: boolean;
}

interface El {
  tag: number;
  /** Where the element's header starts, its contents start, and its contents end. */
  at: number;
  start: number;
  end: number;
}

/** One DER element at `at`, which must end by `limit`. */
function read(buf: Uint8Array, at: number, limit = buf.length): El {
  if (at + 2 > limit) throw new Error('truncated DER');
  const tag = buf[at] as number;
  if ((tag & 0x1f) === 0x1f) throw new Error('unsupported DER tag');
  let len = buf[at + 1] as number;
  let start = at + 2;
  if (len & 0x80) {
    const count = len & 0x7f;
    if (count === 0 || count > 4 || start + count > limit) throw new Error('bad DER length');
    len = 0;
    for (let i = 0; i < count; i++) len = len * 256 + (buf[start + i] as number);
    start += count;
  }
  if (start + len > limit) throw new Error('truncated DER');
  return { tag, at, start, end: start + len };
}

function children(buf: Uint8Array, el: El): El[] {
  const out: El[] = [];
  for (let at = el.start; at < el.end; ) {
    const child = read(buf, at, el.end);
    out.push(child);
    at = child.end;
  }
  return out;
}

/** The child `i` of a list, which must have `tag`; `what` names it in the error. */
function pick(list: El[], i: number, tag: number, what: string): El {
  const el = list[i];
  if (!el || el.tag !== tag) throw new Error(`the token's ${what} is malformed`);
  return el;
}

const bytes = (buf: Uint8Array, el: El) => buf.subarray(el.start, el.end);
const whole = (buf: Uint8Array, el: El) => buf.subarray(el.at, el.end);
const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

function oid(buf: Uint8Array, el: El): string {
  if (el.tag !== 0x06 || el.end === el.start) throw new Error('not an OBJECT IDENTIFIER');
  const parts: number[] = [];
  let value = 0;
  for (let i = el.start; i < el.end; i++) {
    value = value * 128 + ((buf[i] as number) & 0x7f);
    if (!((buf[i] as number) & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  const first = parts.shift() ?? 0;
  return [first < 80 ? Math.floor(first / 40) : 2, first < 80 ? first % 40 : first - 80, ...parts].join('.');
}

const OID = {
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  rsa: '1.2.840.113549.1.1.1',
  rsaPss: '1.2.840.113549.1.1.10',
  mgf1: '1.2.840.113549.1.1.8',
  ecPublicKey: '1.2.840.10045.2.1',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  timeStamping: '1.3.6.1.5.5.7.3.8',
  commonName: '2.5.4.3',
} as const;

const HASHES: Record<string, 'SHA-1' | 'SHA-256' | 'SHA-384' | 'SHA-512'> = {
  '1.3.14.3.2.26': 'SHA-1',
  '2.16.840.1.101.3.4.2.1': 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
};
/** Signature algorithms that name their hash: RSA PKCS#1 v1.5 and ECDSA. SHA-1 signatures are refused. */
const SIGNATURES: Record<string, { kind: 'rsa' | 'ecdsa'; hash: 'SHA-256' | 'SHA-384' | 'SHA-512' }> = {
  '1.2.840.113549.1.1.11': { kind: 'rsa', hash: 'SHA-256' },
  '1.2.840.113549.1.1.12': { kind: 'rsa', hash: 'SHA-384' },
  '1.2.840.113549.1.1.13': { kind: 'rsa', hash: 'SHA-512' },
  '1.2.840.10045.4.3.2': { kind: 'ecdsa', hash: 'SHA-256' },
  '1.2.840.10045.4.3.3': { kind: 'ecdsa', hash: 'SHA-384' },
  '1.2.840.10045.4.3.4': { kind: 'ecdsa', hash: 'SHA-512' },
};
const CURVES: Record<string, { name: 'P-256' | 'P-384' | 'P-521'; size: number }> = {
  '1.2.840.10045.3.1.7': { name: 'P-256', size: 32 },
  '1.3.132.0.34': { name: 'P-384', size: 48 },
  '1.3.132.0.35': { name: 'P-521', size: 66 },
};

async function digest(hash: string, data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest(hash, data as Uint8Array<ArrayBuffer>));
}

function hashOf(buf: Uint8Array, algorithm: El): string {
  const name = HASHES[oid(buf, pick(children(buf, algorithm), 0, 0x06, 'hash algorithm'))];
  if (!name) throw new Error('the token uses an unknown hash algorithm');
  return name;
}

interface Certificate {
  der: Uint8Array;
  tbs: Uint8Array;
  signatureAlgorithm: { buf: Uint8Array; el: El };
  signature: Uint8Array;
  serial: Uint8Array;
  issuer: Uint8Array;
  subject: Uint8Array;
  notBefore: number;
  notAfter: number;
  spki: { buf: Uint8Array; el: El };
  /** extnID → { critical, value (the OCTET STRING's contents) }. */
  extensions: Map<string, { critical: boolean; value: Uint8Array }>;
}

function parseTime(buf: Uint8Array, el: El): number {
  const text = new TextDecoder().decode(bytes(buf, el));
  const m = el.tag === 0x17 ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text) : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z$/.exec(text);
  if (!m || (el.tag !== 0x17 && el.tag !== 0x18)) throw new Error(`"${text.slice(0, 20)}" is not a UTC time`);
  const year = el.tag === 0x17 ? (Number(m[1]) < 50 ? 2000 : 1900) + Number(m[1]) : Number(m[1]);
  return Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

function parseCertificate(der: Uint8Array): Certificate {
  const cert = read(der, 0);
  if (cert.end !== der.length) throw new Error('trailing bytes after a certificate');
  const [tbsEl, algorithm, value] = children(der, cert);
  if (tbsEl?.tag !== 0x30 || algorithm?.tag !== 0x30 || value?.tag !== 0x03) throw new Error('not an X.509 certificate');
  const fields = children(der, tbsEl);
  const at = fields[0]?.tag === 0xa0 ? 1 : 0;
  const serial = pick(fields, at, 0x02, 'certificate serial');
  const validity = children(der, pick(fields, at + 3, 0x30, 'certificate validity'));
  const extensions = new Map<string, { critical: boolean; value: Uint8Array }>();
  const extsEl = fields.find((f) => f.tag === 0xa3);
  if (extsEl) {
    for (const ext of children(der, pick(children(der, extsEl), 0, 0x30, 'certificate extensions'))) {
      const parts = children(der, ext);
      const critical = parts[1]?.tag === 0x01 && der[parts[1].start] !== 0;
      const octets = parts[parts.length - 1];
      if (!octets || octets.tag !== 0x04) throw new Error('a certificate extension is malformed');
      extensions.set(oid(der, pick(parts, 0, 0x06, 'certificate extension')), { critical, value: bytes(der, octets) });
    }
  }
  return {
    der,
    tbs: whole(der, tbsEl),
    signatureAlgorithm: { buf: der, el: algorithm },
    signature: bitString(der, value),
    serial: bytes(der, serial),
    issuer: whole(der, pick(fields, at + 2, 0x30, 'certificate issuer')),
    subject: whole(der, pick(fields, at + 4, 0x30, 'certificate subject')),
    notBefore: parseTime(der, pick(validity, 0, validity[0]?.tag ?? 0, 'certificate validity')),
    notAfter: parseTime(der, pick(validity, 1, validity[1]?.tag ?? 0, 'certificate validity')),
    spki: { buf: der, el: pick(fields, at + 5, 0x30, 'certificate key') },
    extensions,
  };
}

function bitString(buf: Uint8Array, el: El): Uint8Array {
  if (el.tag !== 0x03 || buf[el.start] !== 0) throw new Error('a BIT STRING is malformed');
  return buf.subarray(el.start + 1, el.end);
}

function commonName(cert: Certificate): string {
  const name = read(cert.subject, 0);
  for (const rdn of children(cert.subject, name)) {
    for (const attr of children(cert.subject, rdn)) {
      const [type, value] = children(cert.subject, attr);
      if (type && value && oid(cert.subject, type) === OID.commonName) return new TextDecoder().decode(bytes(cert.subject, value));
    }
  }
  return 'the TSA';
}

/** DER SEQUENCE { INTEGER r, INTEGER s } to WebCrypto's r ‖ s. */
function ecdsaRaw(signature: Uint8Array, size: number): Uint8Array {
  const seq = read(signature, 0);
  const ints = children(signature, seq);
  if (seq.tag !== 0x30 || seq.end !== signature.length || ints.length !== 2 || ints.some((i) => i.tag !== 0x02))
    throw new Error('the ECDSA signature is malformed');
  const out = new Uint8Array(2 * size);
  ints.forEach((int, i) => {
    let value = bytes(signature, int);
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw new Error('the ECDSA signature is malformed');
    out.set(value, (i + 1) * size - value.length);
  });
  return out;
}

/**
 * Whether `signature` over `data` verifies with the key of `spki` under `algorithm` (an
 * AlgorithmIdentifier); `digestHash` is the hash a bare rsaEncryption or id-ecPublicKey uses (CMS).
 */
async function verifySignature(
  spki: { buf: Uint8Array; el: El },
  algorithm: { buf: Uint8Array; el: El },
  signature: Uint8Array,
  data: Uint8Array,
  digestHash?: string,
): Promise<boolean> {
  const [algOid, params] = children(algorithm.buf, algorithm.el);
  const name = oid(algorithm.buf, algOid ?? algorithm.el);
  const [keyAlg, keyBits] = children(spki.buf, spki.el);
  if (!keyAlg || !keyBits) throw new Error('a certificate key is malformed');
  const [keyOidEl, keyParams] = children(spki.buf, keyAlg);
  const keyOid = oid(spki.buf, keyOidEl ?? keyAlg);
  let spkiDer = whole(spki.buf, spki.el);
  let scheme: { kind: 'rsa' | 'pss' | 'ecdsa'; hash: string; salt?: number };
  if (name === OID.rsaPss) {
    scheme = { kind: 'pss', ...pssParams(algorithm.buf, params) };
  } else if (SIGNATURES[name]) {
    scheme = SIGNATURES[name];
  } else if ((name === OID.rsa || name === OID.ecPublicKey) && digestHash && digestHash !== 'SHA-1') {
    scheme = { kind: name === OID.rsa ? 'rsa' : 'ecdsa', hash: digestHash };
  } else {
    throw new Error(`unsupported signature algorithm ${name}`);
  }
  if (scheme.kind === 'ecdsa') {
    if (keyOid !== OID.ecPublicKey || !keyParams) throw new Error('the certificate key is not an ECDSA key');
    const curve = CURVES[oid(spki.buf, keyParams)];
    if (!curve) throw new Error('the certificate key is on an unsupported curve');
    const key = await crypto.subtle.importKey('spki', spkiDer as Uint8Array<ArrayBuffer>, { name: 'ECDSA', namedCurve: curve.name }, false, ['verify']);
    return crypto.subtle.verify(
      { name: 'ECDSA', hash: scheme.hash },
      key,
      ecdsaRaw(signature, curve.size) as Uint8Array<ArrayBuffer>,
      data as Uint8Array<ArrayBuffer>,
    );
  }
  if (keyOid === OID.rsaPss) spkiDer = rsaEncryptionSpki(bitString(spki.buf, keyBits));
  else if (keyOid !== OID.rsa) throw new Error('the certificate key is not an RSA key');
  const algo = scheme.kind === 'pss' ? { name: 'RSA-PSS', hash: scheme.hash } : { name: 'RSASSA-PKCS1-v1_5', hash: scheme.hash };
  const key = await crypto.subtle.importKey('spki', spkiDer as Uint8Array<ArrayBuffer>, algo, false, ['verify']);
  const params2 = scheme.kind === 'pss' ? { name: 'RSA-PSS', saltLength: scheme.salt ?? 20 } : { name: 'RSASSA-PKCS1-v1_5' };
  return crypto.subtle.verify(params2, key, signature as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>);
}

/** RSASSA-PSS-params (RFC 4055): the hash, MGF1 with that same hash (all WebCrypto does), the salt length. */
function pssParams(buf: Uint8Array, params: El | undefined): { hash: string; salt: number } {
  let hash = 'SHA-1';
  let mgfHash = 'SHA-1';
  let salt = 20;
  for (const field of params ? children(buf, params) : []) {
    const inner = children(buf, field)[0];
    if (!inner) continue;
    if (field.tag === 0xa0) hash = hashOf(buf, inner);
    if (field.tag === 0xa1) {
      const [mgf, mgfParams] = children(buf, inner);
      if (!mgf || oid(buf, mgf) !== OID.mgf1 || !mgfParams) throw new Error('unsupported RSA-PSS mask generation');
      mgfHash = hashOf(buf, mgfParams);
    }
    if (field.tag === 0xa2 && inner.tag === 0x02) salt = bytes(buf, inner).reduce((n, b) => n * 256 + b, 0);
  }
  if (hash !== mgfHash || hash === 'SHA-1') throw new Error('unsupported RSA-PSS parameters');
  return { hash, salt };
}

/** An RSA-PSS key's SubjectPublicKeyInfo re-labelled rsaEncryption (the same RSAPublicKey), which every WebCrypto imports. */
function rsaEncryptionSpki(publicKey: Uint8Array): Uint8Array {
  const tlv = (tag: number, content: Uint8Array) => {
    const n = content.length;
    const len = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : n < 0x10000 ? [0x82, n >> 8, n & 0xff] : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
    return Uint8Array.of(tag, ...len, ...content);
  };
  const algorithm = Uint8Array.of(0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00);
  return tlv(0x30, Uint8Array.of(...algorithm, ...tlv(0x03, Uint8Array.of(0, ...publicKey))));
}

/** The certificates of PEM text. */
export function pemCertificates(pem: string): Uint8Array[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => {
    const der = fromBase64(block.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''));
    if (!der) throw new Error('a trusted TSA certificate is not base64');
    return der;
  });
}

interface SignedAttributes {
  contentType?: string;
  messageDigest?: Uint8Array;
  /** ESSCertID (SHA-1) or ESSCertIDv2: the hash of the signer's certificate, and its issuer serial when given. */
  certId?: { hash: string; certHash: Uint8Array; serial?: Uint8Array };
}

function signedAttributes(buf: Uint8Array, el: El): SignedAttributes {
  const out: SignedAttributes = {};
  for (const attr of children(buf, el)) {
    const [type, values] = children(buf, attr);
    if (!type || values?.tag !== 0x31) throw new Error("the token's signed attributes are malformed");
    const value = children(buf, values)[0];
    if (!value) continue;
    const name = oid(buf, type);
    if (name === OID.contentType) out.contentType = oid(buf, value);
    if (name === OID.messageDigest && value.tag === 0x04) out.messageDigest = bytes(buf, value);
    if (name === OID.signingCertificate || name === OID.signingCertificateV2) {
      const first = children(buf, pick(children(buf, value), 0, 0x30, 'signing certificate'))[0];
      if (!first) throw new Error("the token's signing certificate attribute is empty");
      const parts = children(buf, first);
      let i = 0;
      let hash = 'SHA-1';
      if (name === OID.signingCertificateV2) {
        hash = 'SHA-256';
        if (parts[0]?.tag === 0x30) hash = hashOf(buf, parts[i++] as El);
      }
      const certHash = pick(parts, i, 0x04, 'signing certificate hash');
      const issuerSerial = parts[i + 1];
      const serial = issuerSerial?.tag === 0x30 ? children(buf, issuerSerial)[1] : undefined;
      out.certId = { hash, certHash: bytes(buf, certHash), ...(serial?.tag === 0x02 ? { serial: bytes(buf, serial) } : {}) };
    }
  }
  return out;
}

const validAt = (cert: Certificate, time: number) => cert.notBefore <= time && time <= cert.notAfter;

/** Whether `cert` chains, through the token's certificates, to one of `anchors`, each link signed and valid at `time`. */
async function chainsTo(cert: Certificate, anchors: Certificate[], pool: Certificate[], time: number, depth = 0): Promise<boolean> {
  if (anchors.some((a) => equal(a.der, cert.der))) return true;
  if (depth > 5) return false;
  for (const issuer of [...anchors, ...pool]) {
    if (!equal(issuer.subject, cert.issuer) || equal(issuer.der, cert.der) || !validAt(issuer, time)) continue;
    const anchor = anchors.includes(issuer);
    if (!anchor && !isCa(issuer)) continue;
    let signed = false;
    try {
      signed = await verifySignature(issuer.spki, cert.signatureAlgorithm, cert.signature, cert.tbs);
    } catch {
      signed = false;
    }
    if (signed && (anchor || (await chainsTo(issuer, anchors, pool, time, depth + 1)))) return true;
  }
  return false;
}

function isCa(cert: Certificate): boolean {
  const ext = cert.extensions.get(OID.basicConstraints);
  if (!ext) return false;
  const seq = read(ext.value, 0);
  const flag = children(ext.value, seq)[0];
  return flag?.tag === 0x01 && ext.value[flag.start] !== 0;
}

/** RFC 3161 section 2.3: the TSA's certificate has extendedKeyUsage timeStamping only, critical. */
function mayTimestamp(cert: Certificate): boolean {
  const ext = cert.extensions.get(OID.extKeyUsage);
  if (!ext?.critical) return false;
  const purposes = children(ext.value, read(ext.value, 0));
  return purposes.length === 1 && oid(ext.value, purposes[0] as El) === OID.timeStamping;
}

/**
 * Checks a TimeStampResp (DER) over `data`; `trustedPem` holds the certificates the caller
 * trusts (a CA's or the TSA's own). Throws an Error whose message says what is wrong.
 */
export async function checkTimestampToken(token: Uint8Array, data: Uint8Array, trustedPem?: string): Promise<TimestampVerdict> {
  const resp = read(token, 0);
  if (resp.tag !== 0x30 || resp.end !== token.length) throw new Error('the token is not a TimeStampResp');
  const [statusInfo, contentInfo] = children(token, resp);
  const statusEl = statusInfo?.tag === 0x30 ? children(token, statusInfo)[0] : undefined;
  if (statusEl?.tag !== 0x02) throw new Error('the token is not a TimeStampResp');
  const status = bytes(token, statusEl).reduce((n, b) => n * 256 + b, 0);
  if (status !== 0 && status !== 1) throw new Error(`the TSA refused (PKIStatus ${status})`);
  if (!contentInfo) throw new Error('the response holds no token');
  const info = children(token, contentInfo);
  if (oid(token, pick(info, 0, 0x06, 'content type')) !== OID.signedData) throw new Error('the token is not CMS SignedData');
  const signedData = children(token, pick(children(token, pick(info, 1, 0xa0, 'content')), 0, 0x30, 'SignedData'));
  const encap = children(token, pick(signedData, 2, 0x30, 'encapsulated content'));
  if (oid(token, pick(encap, 0, 0x06, 'content type')) !== OID.tstInfo) throw new Error('the token does not carry a TSTInfo');
  const eContent = pick(children(token, pick(encap, 1, 0xa0, 'TSTInfo')), 0, 0x04, 'TSTInfo');
  const tstInfo = bytes(token, eContent);
  const fields = children(tstInfo, pick([read(tstInfo, 0)], 0, 0x30, 'TSTInfo'));
  const imprint = children(tstInfo, pick(fields, 2, 0x30, 'message imprint'));
  const hashed = pick(imprint, 1, 0x04, 'message imprint');
  const genTimeEl = pick(fields, 4, 0x18, 'genTime');
  if (hashOf(tstInfo, pick(imprint, 0, 0x30, 'message imprint')) !== 'SHA-256' || !equal(bytes(tstInfo, hashed), await digest('SHA-256', data)))
    throw new Error('the token signs another hash than the checkpoint');
  const genTime = new TextDecoder().decode(bytes(tstInfo, genTimeEl));
  const time = parseTime(tstInfo, genTimeEl);

  // The certificates the token carries ([0] IMPLICIT), then the one signer.
  let at = 3;
  const carried: Certificate[] = [];
  if (signedData[at]?.tag === 0xa0) {
    for (const c of children(token, signedData[at] as El)) if (c.tag === 0x30) carried.push(parseCertificate(whole(token, c).slice()));
    at++;
  }
  if (signedData[at]?.tag === 0xa1) at++;
  const signerInfos = children(token, pick(signedData, at, 0x31, 'signer infos'));
  if (signerInfos.length !== 1) throw new Error(`the token has ${signerInfos.length} signers, not one`);
  const signer = children(token, signerInfos[0] as El);
  const sid = signer[1];
  const digestAlg = pick(signer, 2, 0x30, 'digest algorithm');
  const attrsEl = pick(signer, 3, 0xa0, 'signed attributes');
  const sigAlg = pick(signer, 4, 0x30, 'signature algorithm');
  const signature = bytes(token, pick(signer, 5, 0x04, 'signature'));
  const hash = hashOf(token, digestAlg);

  const attrs = signedAttributes(token, attrsEl);
  if (attrs.contentType !== OID.tstInfo) throw new Error("the token's signed content type is not TSTInfo");
  if (!attrs.messageDigest || !equal(attrs.messageDigest, await digest(hash, tstInfo)))
    throw new Error("the token's messageDigest is not the hash of its TSTInfo: the TSTInfo was changed");
  if (!attrs.certId) throw new Error('the token names no signing certificate (ESSCertID)');

  const trusted = trustedPem === undefined ? [] : pemCertificates(trustedPem).map(parseCertificate);
  const certId = attrs.certId;
  const candidates = [...carried, ...trusted];
  let cert: Certificate | undefined;
  for (const c of candidates) {
    if (equal(await digest(certId.hash, c.der), certId.certHash) && (!certId.serial || equal(certId.serial, c.serial))) {
      cert = c;
      break;
    }
  }
  if (!cert) throw new Error("the token's signing certificate (ESSCertID) is not among its certificates: the certificate was changed");
  if (sid?.tag === 0x30) {
    const [issuer, serial] = children(token, sid);
    if (!issuer || !serial || !equal(whole(token, issuer), cert.issuer) || !equal(bytes(token, serial), cert.serial))
      throw new Error("the token's signer is not the certificate its ESSCertID names");
  }

  const signedSet = whole(token, attrsEl).slice();
  signedSet[0] = 0x31; // signed as a SET OF, not the [0] IMPLICIT it is stored as (RFC 5652 section 5.4)
  let verified = false;
  try {
    verified = await verifySignature(cert.spki, { buf: token, el: sigAlg }, signature, signedSet, hash);
  } catch (error) {
    throw new Error(`the token's signature cannot be checked: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!verified) throw new Error("the token's signature does not verify with its certificate: the token was changed");
  if (!mayTimestamp(cert)) throw new Error("the token's certificate is not a time-stamping certificate (extendedKeyUsage timeStamping, critical)");
  if (!validAt(cert, time)) throw new Error(`the token's certificate was not valid at ${genTime}`);
  const chained = trusted.length > 0;
  if (chained && !(await chainsTo(cert, trusted, carried, time))) throw new Error("the token's certificate does not chain to a trusted TSA certificate");
  return { genTime, signer: commonName(cert), chained };
}

/** The same, for a base64 token (a tlog-proof's extra line) over a checkpoint's text. */
export async function checkCheckpointTimestamp(extra: string, checkpoint: string, trustedPem?: string): Promise<TimestampVerdict> {
  const token = fromBase64(extra);
  if (!token) throw new Error('the extra line is not base64');
  try {
    return await checkTimestampToken(token, utf8(checkpoint), trustedPem);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(message.startsWith('the ') ? message : `the token is malformed: ${message}`);
  }
}
