import { defineConfig } from 'vitest/config';

/**
 * Files that replace a module with `vi.mock`: they need a module cache of their own. Every other
 * file shares its worker's cache with the files run before it (isolate: false): each file used to
 * import and transform the whole service again, a quarter of the suite's time, and nothing in a
 * file's modules outlives the app it starts and closes (docs/testing.md).
 */
const MOCKING = ['test/abuse.networks.happy.test.ts', 'test/abuse.crowd.security.test.ts'];

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
        test: { name: 'shared', include: ['test/**/*.test.ts', 'clients/typescript/test/**/*.test.ts'], exclude: MOCKING, isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: MOCKING, isolate: true } },
    ],
  },
});
