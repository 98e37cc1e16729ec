import { defineConfig } from 'vitest/config';

/**
 * Files that replace a module with `vi.mock`: they need a module cache of their own. Every other
 * file shares its worker's cache with the files run before it (isolate: false): each file used to
 * import and transform the whole service again, a quarter of the suite's time, and nothing in a
 * file's modules outlives the app it starts and closes (docs/testing.md).
 */
const MOCKING = ['test/abuse.networks.happy.test.ts', 'test/abuse.crowd.security.test.ts'];

/**
 * Files the Node 24 pass of `.ci/run` leaves out (scripts/ci-node24.sh sets TEST_SKIP_NODE_NEUTRAL=1;
 * docs/node24.md): what they check cannot differ between two Node releases, and the Node 20 pass
 * runs them. The page sweeps measure layout in Chromium (tap targets, sideways scroll, axe) of HTML
 * the same code renders; the benchmark smokes prove `npm run bench` and `bench:scale` still reach
 * their reports. A list of exclusions, not inclusions: a new file runs on both Nodes.
 */
const NODE_NEUTRAL = [
  'test/phone.happy.test.ts',
  'test/pages.phone.happy.test.ts',
  'test/inbox.layout.happy.test.ts',
  'test/bench.smoke.test.ts',
  'test/bench.scale.smoke.test.ts',
];
const skipped = process.env.TEST_SKIP_NODE_NEUTRAL === '1' ? NODE_NEUTRAL : [];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more workers only fight over them.
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'shared', include: ['test/**/*.test.ts', 'clients/typescript/test/**/*.test.ts'], exclude: [...MOCKING, ...skipped], isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: MOCKING, isolate: true } },
    ],
  },
});
