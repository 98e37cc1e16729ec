import type SharpModule from 'sharp';
import { loadOnce } from '../../domain/load-once.js';

/**
 * sharp (libvips) is loaded on first use, not at start: the native library, its threads and its
 * JavaScript cost tens of MB of resident memory, and only image uploads and the console's app icons
 * need it (domain/load-once.ts).
 */

export type Sharp = typeof SharpModule;

/**
 * Its operation cache is turned off: it would keep decoded pixels of past uploads (up to 50 MB) for
 * repeats of the same operation on the same input, which never come (every upload differs).
 */
export const loadSharp: () => Promise<Sharp> = loadOnce(() =>
  import('sharp').then(({ default: sharp }) => {
    sharp.cache(false);
    return sharp;
  }),
);
