import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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

/**
 * The longest files, longest first (seconds in CI's Node 20 pass, 2026-11-28). Vitest orders files
 * by their last durations from its cache, and a clean clone has none: it then starts the largest
 * files first, and the longest file (the benchmark smoke, small and slow) began 12 minutes into a
 * 13.6-minute pass and ran alone to its end. These go first; the rest keep vitest's order.
 */
const LONGEST_FIRST = [
  'test/bench.smoke.test.ts', // 97
  'test/phone.happy.test.ts', // 64
  'test/store.outage.error.test.ts', // 48
  'test/fuzz.security.test.ts', // 45
  'test/pages.phone.happy.test.ts', // 45
  'test/inbox.layout.happy.test.ts', // 42
  'test/bench.scale.smoke.test.ts', // 38
  'test/longpoll.crowd.security.test.ts', // 38
];

class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const listed = LONGEST_FIRST.indexOf(path.relative(this.ctx.config.root, spec.moduleId));
      return listed < 0 ? LONGEST_FIRST.length : listed;
    };
    // The files stay grouped by project, in the order vitest's own sort gave them; within a project
    // the listed ones go first. The sort is stable, so the rest keep vitest's order.
    const projects = [...new Set(sorted.map((spec) => spec.project.name))];
    const project = (spec: TestSpecification) => projects.indexOf(spec.project.name);
    return sorted.sort((a, b) => project(a) - project(b) || rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirstSequencer },
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
