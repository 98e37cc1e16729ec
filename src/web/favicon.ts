import type { FastifyInstance } from 'fastify';

/**
 * The service's icon: one SVG (the console's app icon is rendered from it too, operator/alerts/pwa.ts),
 * linked by every page as `/favicon.svg`, and a small ICO at `/favicon.ico` for what asks for that
 * address regardless (a browser showing a JSON document, feed readers, bookmarks). The ICO is
 * drawn here, in code, from the same shapes: it needs no image library at run time, so it cannot
 * fail when sharp is missing. Without them every page cost a 404 and a console error.
 */

export const ICON_COLOR = '#3553d6';

export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">
<rect width="512" height="512" rx="96" fill="${ICON_COLOR}"/>
<circle cx="256" cy="184" r="72" fill="none" stroke="#fff" stroke-width="40"/>
<path d="M112 424c22-78 78-120 144-120s122 42 144 120" fill="none" stroke="#fff" stroke-width="40" stroke-linecap="round"/>
</svg>`;

const SIZE = 32;

/** Is the pixel centre (x, y) of a SIZE×SIZE grid (y down) white in the icon? The SVG's shapes, scaled. */
function white(x: number, y: number): boolean {
  const s = 512 / SIZE;
  const [px, py] = [(x + 0.5) * s, (y + 0.5) * s];
  const head = Math.hypot(px - 256, py - 184);
  if (Math.abs(head - 72) <= 20) return true;
  // The shoulders: an arc of the ellipse through (112, 424), (256, 304) and (400, 424).
  const d = Math.hypot((px - 256) / 144, (py - 424) / 120);
  return py <= 424 + 20 && Math.abs(d - 1) * 130 <= 20;
}

/** Inside the rounded square (corner radius 96 of 512)? */
function inside(x: number, y: number): boolean {
  const r = (96 / 512) * SIZE;
  const cx = Math.min(Math.max(x + 0.5, r), SIZE - r);
  const cy = Math.min(Math.max(y + 0.5, r), SIZE - r);
  return Math.hypot(x + 0.5 - cx, y + 0.5 - cy) <= r;
}

/** A one-image ICO (32×32, 32-bit BMP with its AND mask), as the format has been since Windows 3. */
function drawIco(): Buffer {
  const color = [Number.parseInt(ICON_COLOR.slice(1, 3), 16), Number.parseInt(ICON_COLOR.slice(3, 5), 16), Number.parseInt(ICON_COLOR.slice(5, 7), 16)];
  const pixels = Buffer.alloc(SIZE * SIZE * 4);
  for (let row = 0; row < SIZE; row++) {
    const y = SIZE - 1 - row; // BMP rows go bottom-up
    for (let x = 0; x < SIZE; x++) {
      const at = (row * SIZE + x) * 4;
      if (!inside(x, y)) continue; // transparent
      const [r, g, b] = white(x, y) ? [255, 255, 255] : color;
      pixels.writeUInt8(b ?? 0, at);
      pixels.writeUInt8(g ?? 0, at + 1);
      pixels.writeUInt8(r ?? 0, at + 2);
      pixels.writeUInt8(255, at + 3);
    }
  }
  const mask = Buffer.alloc(SIZE * (SIZE / 8)); // all 0: the alpha channel decides
  const info = Buffer.alloc(40);
  info.writeUInt32LE(40, 0);
  info.writeInt32LE(SIZE, 4);
  info.writeInt32LE(SIZE * 2, 8); // colour image and mask, stacked
  info.writeUInt16LE(1, 12);
  info.writeUInt16LE(32, 14);
  info.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([info, pixels, mask]);
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(SIZE, 6);
  header.writeUInt8(SIZE, 7);
  header.writeUInt16LE(1, 10); // planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18);
  return Buffer.concat([header, image]);
}

const ICO = drawIco();
const SVG = Buffer.from(ICON_SVG);

/** `/favicon.ico` and `/favicon.svg`: public, outside the OpenAPI document and the rate limits, cached a day. */
export function registerFavicon(scope: FastifyInstance): void {
  const open = { config: { kind: 'none' as const }, schema: { hide: true } };
  scope.get('/favicon.ico', open, async (_request, reply) =>
    reply.header('Cache-Control', 'public, max-age=86400').header('X-Content-Type-Options', 'nosniff').type('image/x-icon').send(ICO),
  );
  scope.get('/favicon.svg', open, async (_request, reply) =>
    reply.header('Cache-Control', 'public, max-age=86400').header('X-Content-Type-Options', 'nosniff').type('image/svg+xml').send(SVG),
  );
}
