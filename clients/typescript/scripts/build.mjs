// Builds dist/: the library for every runtime (platform neutral, ESM, no dependency) and the CLI
// for Node. Type-only imports of the server's schemas vanish in the build.
import { build } from 'esbuild';

const common = { bundle: true, format: 'esm', target: 'es2022', sourcemap: true, logLevel: 'warning' };
await build({
  ...common,
  entryPoints: [new URL('../src/index.ts', import.meta.url).pathname],
  platform: 'neutral',
  outfile: new URL('../dist/index.js', import.meta.url).pathname,
});
await build({
  ...common,
  entryPoints: [new URL('../src/cli.ts', import.meta.url).pathname],
  platform: 'node',
  outfile: new URL('../dist/cli.js', import.meta.url).pathname,
});
