import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { parseYaml, type Yaml } from './support/yaml-lite.js';

type Map = { [key: string]: Yaml };
const read = (file: string) => readFileSync(file, 'utf8');
const map = (value: Yaml | undefined): Map => {
  if (value === undefined || typeof value === 'string' || Array.isArray(value)) throw new Error(`expected a mapping, got ${JSON.stringify(value)}`);
  return value;
};
const list = (value: Yaml | undefined): string[] => {
  if (!Array.isArray(value)) throw new Error(`expected a sequence, got ${JSON.stringify(value)}`);
  return value.map(String);
};

/** Compose's `${VAR:-default}` / `${VAR:?error}` / `${VAR}` with the values an operator would give. */
function interpolate(value: string, given: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_all, name: string, kind?: string, rest?: string) => {
    if (given[name] !== undefined) return given[name];
    if (kind === '-') return rest ?? '';
    throw new Error(`${name} is required: ${rest ?? ''}`);
  });
}

const compose = map(parseYaml(read('compose.yaml')));
const services = map(compose.services);
const dockerfile = read('Dockerfile');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('compose.yaml', () => {
  it('has PostgreSQL, two instances, Caddy in front and Mailpit', () => {
    expect(Object.keys(services).sort()).toEqual(['app1', 'app2', 'caddy', 'mailpit', 'postgres']);
    expect(Object.keys(map(compose.volumes))).toEqual(expect.arrayContaining(['postgres-data', 'caddy-data']));
  });

  it('pins every image to a version (no latest, no bare name)', () => {
    for (const [name, service] of Object.entries(services)) {
      const image = String(map(service).image);
      expect(image, name).toMatch(/^[\w./-]+:[\w.-]+$/);
      expect(image, name).not.toMatch(/:latest$/);
    }
  });

  it('runs both instances with the same valid configuration: PostgreSQL, TRUST_PROXY=1, SMTP to Mailpit, a required ADMIN_KEY', () => {
    const given = { POSTGRES_PASSWORD: 'pw-0123456789', ADMIN_KEY: 'admin-key-0123456789abcdef' };
    const [app1, app2] = [map(services.app1), map(services.app2)];
    expect(app2.environment).toEqual(app1.environment);
    const env = map(app1.environment);
    expect(() => interpolate(String(env.ADMIN_KEY), {})).toThrow(/ADMIN_KEY is required/);
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v), given)]));
    // Every variable is one the service reads, and the whole set passes its start-up validation.
    const config = loadConfig(resolved);
    expect(config.databaseUrl).toBe('postgres://hts:pw-0123456789@postgres:5432/hts');
    expect(config.trustProxy).toBe(1);
    expect(config.smtpUrl).toBe('smtp://mailpit:1025');
    expect(config.baseUrl).toBe('https://localhost');
    expect(config.adminKey).toBe(given.ADMIN_KEY);
    const postgres = map(map(services.postgres).environment);
    expect(`postgres://${String(postgres.POSTGRES_USER)}:pw-0123456789@postgres:5432/${String(postgres.POSTGRES_DB)}`).toBe(config.databaseUrl);
    for (const app of [app1, app2]) {
      expect(map(map(app.depends_on).postgres).condition).toBe('service_healthy');
      expect(app.build).toBe('.');
      expect(list(app.volumes)[0]).toMatch(/:\/data$/);
    }
  });

  it('health-checks every service; the instances through readiness', () => {
    for (const [name, service] of Object.entries(services)) {
      const check = map(map(service).healthcheck);
      expect(list(check.test)[0], name).toMatch(/^CMD(-SHELL)?$/);
      expect(check.interval, name).toMatch(/^\d+s$/);
    }
    for (const app of ['app1', 'app2']) expect(list(map(map(services[app]).healthcheck).test).join(' ')).toContain('/api/v1/health/ready');
    expect(list(map(map(services.postgres).healthcheck).test).join(' ')).toContain('pg_isready');
    expect(map(map(services.caddy).depends_on).app1).toEqual({ condition: 'service_healthy' });
  });

  it('publishes only Caddy to the world, Mailpit to loopback, no instance directly', () => {
    expect(list(map(services.caddy).ports)).toEqual(expect.arrayContaining(['80:80', '443:443']));
    expect(list(map(services.mailpit).ports).every((p) => p.startsWith('127.0.0.1:'))).toBe(true);
    for (const name of ['app1', 'app2', 'postgres']) expect(map(services[name]).ports, name).toBeUndefined();
  });
});

describe('Caddyfile', () => {
  const caddyfile = read('Caddyfile');
  it('balances over both instances, checks their readiness, and terminates TLS for SITE_ADDRESS', () => {
    expect(caddyfile).toMatch(/reverse_proxy app1:8080 app2:8080/);
    expect(caddyfile).toMatch(/health_uri \/api\/v1\/health\/ready/);
    expect(caddyfile).toMatch(/^\{\$SITE_ADDRESS:localhost\} \{/m);
    expect(list(map(services.caddy).volumes)).toContain('./Caddyfile:/etc/caddy/Caddyfile:ro');
  });
});

describe('Dockerfile (hadolint-style rules)', () => {
  const froms = instructions.filter((l) => /^FROM /i.test(l));
  const arg = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1] ?? '';

  it('is multi-stage on a maintained slim Node LTS image, pinned and never latest', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(froms.every((f) => / AS \w+$/i.test(f))).toBe(true);
    expect(arg).toMatch(/^node:(22|24)[\w.-]*-slim$/);
    expect(dockerfile).not.toMatch(/:latest\b/);
  });

  it('installs production dependencies with npm ci, cleans apt lists, and bundles in the build stage', () => {
    expect(instructions).toContain('RUN npm ci --omit=dev --no-audit --no-fund');
    expect(dockerfile).not.toMatch(/npm install/);
    const apt = instructions.find((l) => l.includes('apt-get install')) ?? '';
    expect(apt).toContain('--no-install-recommends');
    expect(apt).toContain('rm -rf /var/lib/apt/lists/*');
    expect(instructions).toContain('RUN npm run -s build');
    expect(instructions.some((l) => /^ADD /i.test(l))).toBe(false);
  });

  it('runs as a non-root user with data under a volume and a HEALTHCHECK through node', () => {
    const runtime = instructions.slice(instructions.lastIndexOf(froms.at(-1) ?? ''));
    const user = runtime.filter((l) => /^USER /.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)$/);
    expect(runtime.findIndex((l) => /^USER /.test(l))).toBeLessThan(runtime.findIndex((l) => /^CMD /.test(l)));
    expect(runtime).toContain('VOLUME ["/data"]');
    expect(dockerfile).toMatch(/DATA_DIR=\/data/);
    const healthcheck = runtime.find((l) => l.startsWith('HEALTHCHECK')) ?? '';
    expect(healthcheck).toContain('CMD ["node"');
    expect(healthcheck).toContain('/api/v1/health');
    // The image runs the bundle with exactly npm start's Node flags (memory tuning included).
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    const flags = start.split(' ').filter((word) => word.startsWith('--'));
    expect(flags).toContain('--enable-source-maps');
    expect(runtime.find((l) => l.startsWith('CMD '))).toBe(`CMD [${['node', ...flags, 'dist/server.mjs'].map((word) => JSON.stringify(word)).join(', ')}]`);
    expect(runtime).toContain('EXPOSE 8080');
  });

  it('points the comment on its Node flags at a document that explains them (issue 51: the README note it named did not exist)', () => {
    const lines = dockerfile.split('\n');
    const cmd = lines.findIndex((l) => l.startsWith('CMD '));
    let first = cmd;
    while (first > 0 && (lines[first - 1]?.startsWith('#') || lines[first - 1]?.startsWith('STOPSIGNAL'))) first -= 1;
    const comment = lines.slice(first, cmd).join(' ');
    const named = [...comment.matchAll(/\b(README|docs\/[\w.-]+\.md)\b/g)].map((m) => (m[1] === 'README' ? 'README.md' : String(m[1])));
    expect(named.length, comment).toBeGreaterThan(0);
    for (const file of named) {
      const text = read(file);
      for (const idea of ['semi-space', '--heap-growing-percent', '--v8-pool-size']) expect(text, `${file} explains ${idea}`).toContain(idea);
    }
  });

  it('keeps secrets, data and local installs out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['node_modules', 'data', '.env', '.git', '*.db']) expect(ignored).toContain(entry);
  });

  it('leaves Node 20 working for a clone (engines)', () => {
    expect((JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node).toBe('>=20');
  });
});

describe('yaml-lite (the reader the compose checks rely on)', () => {
  it('reads mappings, sequences, flow sequences, quotes and comments', () => {
    expect(parseYaml('a: 1 # c\nb:\n  - "x # y"\n  - z\nc: [\'p\', "q"]\nd:\n  e: f\n')).toEqual({ a: '1', b: ['x # y', 'z'], c: ['p', 'q'], d: { e: 'f' } });
  });
  it('refuses what it does not understand rather than misreading it', () => {
    expect(() => parseYaml('a: &x 1\n')).toThrow(/subset/);
    expect(() => parseYaml('a:\n  - b: c\n')).toThrow(/subset/);
    expect(() => parseYaml('a: 1\na: 2\n')).toThrow(/duplicate/);
  });
});
