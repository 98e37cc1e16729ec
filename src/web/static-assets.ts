import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/**
 * Stylesheets and scripts as files (src/web/assets/), served under content-hashed names with a
 * year-long immutable cache lifetime: a page names the hash of the bytes it was written for, so a
 * changed file is a new address and never a stale cache entry.
 *
 * Where the files are: next to this module in `assets/`. From source (vitest, tsx) that is
 * src/web/assets/; in the bundle (`npm start`) this module is part of dist/server.mjs and the
 * build copies the folder to dist/assets/ (scripts/build.mjs), so the same relative URL holds.
 */

const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

export const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface StaticAsset {
  /** The file's name in src/web/assets/, e.g. `pages.css`. */
  readonly file: string;
  /** The address pages link to, e.g. `/assets/pages.3f2a9c1b.css`. */
  readonly url: string;
  readonly body: Buffer;
  readonly contentType: string;
}

/**
 * Reads one file of src/web/assets/ (once, when the module that names it loads) and gives it its
 * hashed address under `prefix` (`/assets` for the public pages; the console can use
 * `/operator/assets`). A missing file stops the service at start, naming it.
 */
export function staticAsset(file: string, prefix = '/assets'): StaticAsset {
  const ext = path.extname(file);
  const contentType = CONTENT_TYPES[ext];
  if (!contentType) throw new Error(`static asset ${file}: no content type for ${ext}`);
  const body = readFileSync(path.join(ASSETS_DIR, file));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { file, url: `${prefix}/${path.basename(file, ext)}.${hash}${ext}`, body, contentType };
}

/** One GET route per asset, at its hashed address, outside the OpenAPI document and the rate limits. */
export function registerStaticAssets(scope: FastifyInstance, assets: readonly StaticAsset[]): void {
  for (const asset of assets) {
    scope.get(asset.url, { config: { kind: 'none' }, schema: { hide: true } }, async (_request, reply) =>
      reply.header('Cache-Control', IMMUTABLE).header('X-Content-Type-Options', 'nosniff').type(asset.contentType).send(asset.body),
    );
  }
}
