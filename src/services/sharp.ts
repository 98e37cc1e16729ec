import type SharpModule from 'sharp';

/**
 * sharp (libvips) is loaded on first use, not at start: the native library, its threads and its
 * JavaScript cost tens of MB of resident memory, and only image uploads and the console's app icons
 * need it. Every caller shares the one load; a failed load is retried by the next call.
 */

export type Sharp = typeof SharpModule;

let loading: Promise<Sharp> | undefined;

export function loadSharp(): Promise<Sharp> {
  if (!loading) {
    const attempt = import('sharp').then(({ default: sharp }) => {
      // libvips' operation cache would keep decoded pixels of past uploads (up to 50 MB) for
      // repeats of the same operation on the same input, which never come: every upload differs.
      sharp.cache(false);
      return sharp;
    });
    loading = attempt;
    attempt.catch(() => {
      if (loading === attempt) loading = undefined;
    });
  }
  return loading;
}
