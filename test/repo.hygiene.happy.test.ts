import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The repository's tracked text files (git knows them; a clean clone has exactly these). */
function trackedTextFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0');
  return listed.filter((file) => /\.(ts|mjs|js|md|json|css|html|py|sh|ya?ml|toml)$/.test(file) && !file.endsWith('package-lock.json'));
}

describe('the repository', () => {
  // A merge resolved in a hurry once committed its markers into docs/mcp.md, and nothing failed.
  it('holds no merge conflict markers', () => {
    const marked = trackedTextFiles().filter((file) => {
      let text: string;
      try {
        text = readFileSync(path.join(ROOT, file), 'utf8');
      } catch {
        return false;
      }
      return /^(<{7} |>{7} |={7}$)/m.test(text);
    });
    expect(marked).toEqual([]);
  });
});
