import type { FastifyInstance } from 'fastify';
import type { Clock } from '../domain/time.js';

/**
 * The API versions the service serves, and what each announces about its retirement. Version 1 is
 * the only and current one, so it emits no Deprecation or Sunset header. When /api/v2 ships, v1
 * gets `deprecated_at`, `sunset_at` (at least 90 days later) and `successor`; from
 * `deprecated_at` on, every v1 response carries the headers and the platform manifest lists a
 * notice.
 */
export interface ApiVersion {
  /** "v1" */
  version: string;
  /** Path prefix every route of this version lives under, e.g. "/api/v1/". */
  prefix: string;
  /** ISO 8601: when it was (or will be) marked deprecated. */
  deprecated_at?: string;
  /** ISO 8601: when it stops answering. */
  sunset_at?: string;
  /** Path or URL of the version that replaces it. */
  successor?: string;
}

/** The version every deployment serves today. */
export const V1: ApiVersion = { version: 'v1', prefix: '/api/v1/' };

/**
 * The versions one application serves: v1 plus any added at start (a future /api/v2, or a
 * test-only entry). Built once in src/deps.ts; documents are generated from it when the app is ready.
 */
export class ApiVersionRegistry {
  private readonly entries: ApiVersion[] = [V1];

  constructor(extra: readonly ApiVersion[] = []) {
    for (const entry of extra) this.register(entry);
  }

  /** Every known version; the first entry whose prefix matches a path owns it. */
  list(): readonly ApiVersion[] {
    return this.entries;
  }

  /** Adds a version, or replaces the one of the same name. Call it before the app is built. */
  register(entry: ApiVersion): void {
    const existing = this.entries.findIndex((v) => v.version === entry.version);
    if (existing >= 0) this.entries.splice(existing, 1, entry);
    else this.entries.push(entry);
  }
}

export function isDeprecated(version: ApiVersion, now: Date): boolean {
  return version.deprecated_at !== undefined && Date.parse(version.deprecated_at) <= now.getTime();
}

/** RFC 9651 date item (as RFC 9745 uses it): `@` and whole Unix seconds. */
function structuredDate(value: string): string {
  return `@${Math.floor(Date.parse(value) / 1000)}`;
}

/** The headers a deprecated version's responses carry; empty for a current one. */
export function deprecationHeaders(version: ApiVersion, now: Date, baseUrl: string): Record<string, string> {
  if (!isDeprecated(version, now) || version.deprecated_at === undefined) return {};
  const headers: Record<string, string> = { Deprecation: structuredDate(version.deprecated_at) };
  // RFC 8594: an HTTP-date.
  if (version.sunset_at !== undefined) headers.Sunset = new Date(version.sunset_at).toUTCString();
  if (version.successor !== undefined) {
    const target = /^https?:\/\//.test(version.successor) ? version.successor : `${baseUrl}${version.successor}`;
    headers.Link = `<${target}>; rel="successor-version"`;
  }
  return headers;
}

/**
 * The notices the platform manifest lists: one per version with a deprecation date, announced
 * ahead of that date as well (the manifest is generated once at start).
 */
export function deprecationNotices(versions: readonly ApiVersion[], baseUrl: string) {
  return versions
    .filter((v) => v.deprecated_at !== undefined)
    .map((v) => ({
      version: v.version,
      prefix: v.prefix,
      deprecated_at: v.deprecated_at ?? null,
      sunset_at: v.sunset_at ?? null,
      successor: v.successor === undefined ? null : /^https?:\/\//.test(v.successor) ? v.successor : `${baseUrl}${v.successor}`,
      notice:
        `API ${v.version} is deprecated` +
        (v.sunset_at ? ` and stops answering after ${v.sunset_at}` : '') +
        (v.successor ? `; move to ${v.successor}` : '') +
        '. It keeps working at least 90 days after its replacement ships.',
    }));
}

/**
 * Adds the deprecation headers to every response of a deprecated version. Registered before any
 * route (from registerOpenApi) so it covers them all, errors included.
 */
export function registerVersionHeaders(app: FastifyInstance, versions: ApiVersionRegistry, clock: Clock, baseUrl: string): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const path = request.url;
    if (!path.startsWith('/api/')) return done(null, payload);
    const version = versions.list().find((v) => path.startsWith(v.prefix));
    if (version) {
      for (const [name, value] of Object.entries(deprecationHeaders(version, clock.now(), baseUrl))) {
        if (name === 'Link') {
          const existing = reply.getHeader('Link');
          reply.header('Link', existing ? `${String(existing)}, ${value}` : value);
        } else {
          reply.header(name, value);
        }
      }
    }
    return done(null, payload);
  });
}
