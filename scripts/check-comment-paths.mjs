/**
 * Part of `npm run lint`: fails when a comment names a repository path that does not exist, so a
 * comment cannot keep pointing at a file that moved or went away (docs/development.md, "Comments
 * that cannot go stale"). A path is a word with a slash and a file extension (`services/tasks/tasks.ts`,
 * `docs/inbox.md`, `src/web/assets/`); it counts as found when it names a file or folder from the
 * repository root, from `src/`, or from the commenting file's folder or any folder above it. Build outputs (`dist/`), URLs
 * and package paths (`@scope/name/file.js`, `node_modules/…`) are not checked.
 *
 * `node scripts/check-comment-paths.mjs [root]`: the root defaults to the working directory
 * (test/lint.comments.error.test.ts runs it on a copy with a stale comment).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(process.argv[2] ?? '.');
/** The folders whose source comments are checked. */
const SCANNED = ['src', 'bench', 'scripts'];
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs|css)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'profiles']);

/** Block comments and line comments (a `//` after a quote or `:` is part of a string or URL, not a comment). */
const COMMENTS = /\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/[^\n]*/g;
const SHELL_COMMENTS = /(?:^|\s)#[^\n]*/g;
/** A path: segments joined by slashes, the last with a known extension, or ending in a slash. */
const PATH = /(?<![\w@.:/-])((?:\.{1,2}\/)?[A-Za-z0-9_][\w.-]*(?:\/[\w.-]+)+(?:\.(?:ts|mts|js|mjs|cjs|json|md|css|sh|yaml|yml)\b|\/))(?![\w/-])/g;
const IGNORED = /^(?:dist\/|node_modules\/|\.\.?\/\.\.?\/node_modules|https?|e\.g\.|i\.e\.)/;

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (SOURCE.test(entry.name) || entry.name.endsWith('.sh')) out.push(full);
  }
  return out;
}

function exists(candidate) {
  return existsSync(candidate) && (candidate.endsWith('/') ? statSync(candidate).isDirectory() : true);
}

function found(file, named) {
  const bases = [ROOT, path.join(ROOT, 'src')];
  for (let dir = path.dirname(file); dir.startsWith(ROOT); dir = path.dirname(dir)) {
    bases.push(dir);
    if (dir === ROOT) break;
  }
  return bases.some((base) => exists(path.join(base, named)));
}

const problems = [];
for (const folder of SCANNED) {
  if (!existsSync(path.join(ROOT, folder))) continue;
  for (const file of walk(path.join(ROOT, folder), [])) {
    const text = readFileSync(file, 'utf8');
    const comments = file.endsWith('.sh') ? SHELL_COMMENTS : COMMENTS;
    for (const comment of text.matchAll(comments)) {
      for (const match of comment[0].matchAll(PATH)) {
        const named = match[1];
        if (IGNORED.test(named) || found(file, named)) continue;
        const line = text.slice(0, comment.index + match.index).split('\n').length;
        problems.push(`${path.relative(ROOT, file)}:${line}: the comment names ${named}, which does not exist`);
      }
    }
  }
}

if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n${problems.length} comment(s) name a path that does not exist.\n`);
  process.exit(1);
}
