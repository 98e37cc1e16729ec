import { randomHex } from './ids.js';

/**
 * Pure rules for evidence files: ids, safe file names, Content-Disposition both ways, and the
 * media type a file really has (its first bytes, never the declared type alone).
 */

export function newAttachmentId(now: Date): string {
  return `att-${now.getUTCFullYear()}-${randomHex(16)}`;
}

export const ATTACHMENT_ID_PATTERN = /^att-\d{4}-[0-9a-f]{32}$/;

/** Longest stored name, in characters (the extension is kept when a name is cut). */
export const NAME_MAX = 120;

// C0/C1 controls, DEL, and the bidirectional overrides/isolates/marks that can make
// "evil‮gpj.exe" read as "evilexe.jpg"; zero-width characters and BOM too.
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g;
const RESERVED = /[<>:"/\\|?*]/g;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;

/**
 * A name that is safe on any file system and in any header: no path (only the last segment
 * counts), no control or bidi characters, no reserved characters, no leading dots, at most
 * NAME_MAX characters with the extension kept. `fallback` when nothing is left.
 */
export function safeFileName(raw: string | undefined, fallback: string): string {
  let name = (raw ?? '').normalize('NFC');
  name = name.split(/[/\\]/).pop() ?? '';
  name = name.replace(UNSAFE_CHARS, '').replace(RESERVED, '_').replace(/\s+/g, ' ').trim();
  name = name.replace(/^[.\s]+/, '').replace(/[.\s]+$/, '');
  if (WINDOWS_DEVICE.test(name)) name = `_${name}`;
  if ([...name].length > NAME_MAX) {
    const chars = [...name];
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 && name.length - dot <= 12 ? [...name.slice(dot)] : [];
    name =
      chars
        .slice(0, NAME_MAX - ext.length)
        .join('')
        .trimEnd() + ext.join('');
  }
  return name === '' ? fallback : name;
}

/** The file name of a `Content-Disposition` header (RFC 6266: filename* preferred over filename). */
export function dispositionFileName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const star = /filename\*\s*=\s*([^;]+)/i.exec(header);
  if (star?.[1]) {
    const match = /^\s*([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(star[1].trim());
    if (match?.[2] !== undefined) {
      const value = match[2].replace(/"/g, '');
      try {
        if ((match[1] ?? '').toLowerCase() === 'utf-8') return decodeURIComponent(value);
        // ISO-8859-1 (the other charset RFC 8187 names): each %XX is one character.
        return value.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
      } catch {
        // A malformed percent-encoding: fall back to the plain filename parameter.
      }
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted?.[1] !== undefined) return utf8FromLatin1(quoted[1].replace(/\\(.)/g, '$1'));
  const token = /filename\s*=\s*([^;\s]+)/i.exec(header);
  return token?.[1] === undefined ? undefined : utf8FromLatin1(token[1]);
}

/** Node reads header bytes as Latin-1; a client that sent raw UTF-8 gets its name back intact. */
function utf8FromLatin1(value: string): string {
  if (!/[\u0080-\u00ff]/.test(value) || /[^\u0000-\u00ff]/.test(value)) return value;
  const decoded = Buffer.from(value, 'latin1').toString('utf8');
  return decoded.includes('\ufffd') ? value : decoded;
}

/** `attachment` with an ASCII `filename` fallback and the exact name in `filename*` (RFC 6266/8187). */
export function contentDisposition(name: string): string {
  const ascii =
    name
      .normalize('NFKD')
      .replace(/[^\x20-\x7e]/g, '')
      .replace(/["\\%]/g, '_')
      .trim() || 'file';
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Images whose metadata is stripped (and which get a thumbnail) when they can be decoded. */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/heic'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

export function isImageType(type: string): type is ImageType {
  return (IMAGE_TYPES as readonly string[]).includes(type);
}

const HEIF_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);
const MP4_BRANDS = new Set(['isom', 'iso2', 'iso4', 'iso5', 'iso6', 'mp41', 'mp42', 'avc1', 'dash', 'm4v ', 'mmp4', 'msnv', '3gp4', '3gp5', '3g2a']);

/** Bytes the sniffing needs at most. */
export const SNIFF_BYTES = 16;

/** The media type the first bytes prove, or undefined when they prove nothing. */
export function sniffMediaType(head: Buffer): string | undefined {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  const ascii = (from: number, to: number) => head.subarray(from, to).toString('latin1');
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'image/gif';
  if (ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12).toLowerCase();
    if (brand === 'avif' || brand === 'avis') return 'image/avif';
    if (HEIF_BRANDS.has(brand)) return 'image/heic';
    if (brand === 'qt  ') return 'video/quicktime';
    if (MP4_BRANDS.has(brand)) return 'video/mp4';
  }
  if (starts(0x1a, 0x45, 0xdf, 0xa3)) return 'video/webm';
  if (ascii(0, 5) === '%PDF-') return 'application/pdf';
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'application/zip';
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 3) === 'ID3') return 'audio/mpeg';
  return undefined;
}

/** Declared types kept when the bytes prove nothing else: plain data that no browser runs. */
const PLAIN_TYPES = new Set(['text/plain', 'text/csv', 'text/markdown', 'application/json']);

/**
 * The media type a file is stored and served with: what its bytes prove; else a declared plain
 * text type when the file holds no NUL; else application/octet-stream. A declared image/jpeg
 * that is not a JPEG, text/html or image/svg+xml all end up as application/octet-stream.
 */
export function effectiveMediaType(head: Buffer, declared: string | undefined): string {
  const sniffed = sniffMediaType(head);
  if (sniffed) return sniffed;
  const type = (declared ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (PLAIN_TYPES.has(type) && !head.includes(0)) return type;
  return 'application/octet-stream';
}

/** A default name from the media type, for uploads that name nothing. */
export function fallbackName(mediaType: string): string {
  const ext: Record<string, string> = {
    'image/jpeg': '.jpg',
    'image/png': '.png',
    'image/webp': '.webp',
    'image/gif': '.gif',
    'image/avif': '.avif',
    'image/heic': '.heic',
    'video/mp4': '.mp4',
    'video/quicktime': '.mov',
    'video/webm': '.webm',
    'application/pdf': '.pdf',
    'application/zip': '.zip',
    'text/plain': '.txt',
    'text/csv': '.csv',
    'text/markdown': '.md',
    'application/json': '.json',
    'audio/ogg': '.ogg',
    'audio/mpeg': '.mp3',
  };
  return `file${ext[mediaType] ?? '.bin'}`;
}
