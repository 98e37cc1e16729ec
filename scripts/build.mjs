/**
 * `npm run build`: bundles src/ into dist/server.mjs (the file `npm start` and the image run).
 * Packages stay external, loaded from node_modules at run time (native add-ons, CommonJS packages
 * that find files next to themselves, and the packages the service loads only on first use with
 * `await import()`: sharp, the MCP SDK), except the ESM packages listed in BUNDLED: each is
 * hundreds of small modules, and Node keeps a module record, its source and its loader entries
 * for every one (about 9 MB of resident memory for these two); bundled, they are one script, and
 * only the parts the service uses. The SQLite driver is never seen here: src/store/sqlite-driver.ts
 * requires one of two installed builds by name at run time, by the Node that runs the bundle.
 */
import { cpSync } from 'node:fs';
import { build } from 'esbuild';

const BUNDLED = new Set(['typebox', 'kysely']);

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

await build({
  // The service, and the mail thread it starts with its first mail (src/mail/transport/thread-transport.ts
  // looks for mail-thread.mjs beside the bundle).
  entryPoints: { server: 'src/server.ts', 'mail-thread': 'src/mail/transport/thread-entry.ts' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  // Stack traces map back to src/ with --enable-source-maps; the sources themselves are not
  // embedded (Node would parse them into the heap at start: about 9 MB).
  sourcemap: true,
  sourcesContent: false,
  // No comments or indentation: V8 keeps the source of every script in the heap.
  minifyWhitespace: true,
  // Template literals are compiled to plain strings, which esbuild writes in ASCII (\u escapes).
  // A single character outside Latin-1 left in a template (an em dash in a page) would make V8
  // hold the whole bundle's source as UTF-16: twice its size.
  supported: { 'template-literal': false },
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-packages',
      setup(context) {
        // Bare specifiers (not ./, ../ or /); node: built-ins are external on this platform anyway.
        context.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('node:') || BUNDLED.has(packageOf(args.path))) return undefined;
          return { path: args.path, external: true };
        });
      },
    },
  ],
});

// The stylesheets and scripts of the pages are files read at start (src/web/static-assets.ts looks
// for them in assets/ next to the module, which in the bundle is dist/).
cpSync('src/web/assets', 'dist/assets', { recursive: true });
// The MCP App's markup, style and script, joined into one document at start (src/mcp/task-card.ts
// looks for them in apps/ next to the module).
cpSync('src/mcp/apps', 'dist/apps', { recursive: true });
