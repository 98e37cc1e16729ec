import type { ImageType } from '../../domain/attachments.js';
import { AppError, validationFailed } from '../../domain/errors.js';
import { loadSharp } from './sharp.js';

/**
 * Photos, through sharp (libvips): metadata stripped unless kept, and a small preview. sharp needs
 * the whole image in memory once (the upload is never buffered twice). Orientation is applied to
 * the pixels before the EXIF tag goes, so a phone photo stays upright; the colour profile (no
 * privacy in it) is kept; re-encoding uses high quality so a photo is not visibly degraded.
 * sharp itself is loaded with the first image (see sharp.ts).
 */

export interface ProcessedImage {
  /** The bytes to store (the original when metadata is kept). */
  data: Buffer;
  /** A WebP preview at most 320 px on its longer side, or undefined when the image cannot be decoded here. */
  thumbnail: Buffer | undefined;
}

const THUMBNAIL_PX = 320;
// A 25 MB upload must not expand into gigabytes of pixels (decompression bombs).
const OPTIONS = { limitInputPixels: 100_000_000, failOn: 'error' } as const;

function undecodable(type: string): AppError {
  if (type === 'image/heic') {
    return new AppError(
      'unsupported_media_type',
      'HEIC (HEVC) photos cannot be decoded on this server, so their metadata (GPS included) cannot be removed. Export the photo as JPEG (on iPhone: Settings → Camera → Formats → Most Compatible) and upload that.',
    );
  }
  return validationFailed(
    [`file is not a readable ${type.slice('image/'.length).toUpperCase()} image`],
    'The file claims to be an image but cannot be decoded, so its metadata cannot be removed.',
  );
}

async function thumbnailOf(input: Buffer): Promise<Buffer | undefined> {
  const sharp = await loadSharp();
  try {
    return await sharp(input, OPTIONS)
      .rotate()
      .resize(THUMBNAIL_PX, THUMBNAIL_PX, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 70 })
      .toBuffer();
  } catch {
    return undefined;
  }
}

async function stripped(input: Buffer, type: ImageType): Promise<Buffer> {
  // sharp writes no metadata unless asked to: EXIF, XMP, IPTC, GPS and maker notes all go.
  const sharp = await loadSharp();
  const image = sharp(input, OPTIONS).rotate().keepIccProfile();
  switch (type) {
    case 'image/jpeg':
      return image.jpeg({ quality: 92, mozjpeg: false, chromaSubsampling: '4:4:4' }).toBuffer();
    case 'image/png':
      return image.png({ compressionLevel: 6 }).toBuffer();
    case 'image/webp':
      return image.webp({ quality: 92 }).toBuffer();
    case 'image/avif':
    case 'image/heic':
      return image.avif({ quality: 80 }).toBuffer();
  }
}

/**
 * Strips (unless `keepMetadata`) and previews one image. An image that cannot be decoded is refused
 * when its metadata must go, since nothing else could remove it; kept as it is otherwise.
 */
export async function processImage(input: Buffer, type: ImageType, keepMetadata: boolean): Promise<ProcessedImage> {
  if (keepMetadata) return { data: input, thumbnail: await thumbnailOf(input) };
  let data: Buffer;
  // Loaded before the attempt: a library that cannot load is a fault of the server, not of the image.
  await loadSharp();
  try {
    data = await stripped(input, type);
  } catch {
    throw undecodable(type);
  }
  return { data, thumbnail: await thumbnailOf(data) };
}

/** The stored type once processed: a decodable HEIF (AVIF) stays AVIF. */
export function processedType(type: ImageType): string {
  return type === 'image/heic' ? 'image/avif' : type;
}
