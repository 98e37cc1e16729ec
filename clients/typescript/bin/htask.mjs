#!/usr/bin/env node
// htask. In a checkout of the repository it runs the TypeScript source through tsx (a root
// dependency), so it is never stale; installed elsewhere it runs the build in dist/ (npm run build).
import { existsSync } from 'node:fs';

const source = new URL('../src/cli.ts', import.meta.url);
let cli;
if (existsSync(source)) {
  try {
    const { tsImport } = await import('tsx/esm/api');
    cli = await tsImport(source.href, import.meta.url);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  }
}
cli ??= await import(new URL('../dist/cli.js', import.meta.url).href);
const code = await cli.run(process.argv.slice(2));
// Exit once the output is flushed: an idle keep-alive socket must not hold the process open.
process.stdout.write('', () => process.exit(code));
