import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link in the README and docs/ resolves in a clone (issue 30, item 8): a link to a
 * file outside the repository (the steering repo's shared/, say) or to a file since moved fails
 * here, not in a newcomer's browser.
 */

const ROOT = path.resolve(import.meta.dirname, '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return markdownFiles(full);
    return name.endsWith('.md') ? [full] : [];
  });
}

const FILES = [
  path.join(ROOT, 'README.md'),
  ...markdownFiles(path.join(ROOT, 'docs')),
  ...markdownFiles(path.join(ROOT, 'clients')).filter((f) => !f.includes('node_modules') && !f.includes('.venv')),
];

/** Inline links and images, `[text](target)`, outside fenced code blocks. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string);
}

describe('documentation links', () => {
  it('finds the documents to check', () => {
    expect(FILES.length).toBeGreaterThan(10);
  });

  for (const file of FILES) {
    it(`${path.relative(ROOT, file)}: every relative link names a file of the repository`, () => {
      const broken = linksOf(readFileSync(file, 'utf8'))
        .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
        .filter((target) => {
          const resolved = path.resolve(path.dirname(file), decodeURIComponent(target.split('#')[0] as string));
          return !resolved.startsWith(`${ROOT}${path.sep}`) || !existsSync(resolved);
        });
      expect(broken).toEqual([]);
    });
  }

  it('names no file outside the repository in prose either (neither ../shared nor a /work/ path exists in a clone)', () => {
    const offenders = FILES.filter((file) => /\.\.\/shared\/|\/work\//.test(readFileSync(file, 'utf8'))).map((file) => path.relative(ROOT, file));
    expect(offenders).toEqual([]);
  });
});
