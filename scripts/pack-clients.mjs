/**
 * `npm run clients:pack`: the two clients as files another project installs from, without a
 * registry (docs/clients.md, "Installing in another project"), in dist/clients/:
 *
 * - human-task-client-<version>.tgz: `npm pack` of clients/typescript (its prepack builds dist/;
 *   the package has no dependency, so `npm install --offline <tgz>` needs nothing else);
 * - human_task_client-<version>-py3-none-any.whl: clients/python/scripts/build_wheel.py (standard
 *   library only);
 * - wheelhouse/: that wheel and the wheels of its dependencies (httpx, cryptography and theirs),
 *   taken with `pip download` from this machine's package index, once, with no retries, so that
 *   `pip install --no-index --find-links dist/clients/wheelhouse <wheel>` needs no index. The
 *   wheels are for this machine's Python and platform: build on one like the target.
 *
 * Exits 1, naming the step, when one fails.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'dist/clients');
const PYTHON = process.env.PYTHON ?? 'python3';

function step(name, command, args, cwd = ROOT) {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    process.stderr.write(`clients:pack: ${name} failed:\n${error.stderr || error.message}\n`);
    process.exit(1);
  }
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const [packed] = JSON.parse(step('npm pack (clients/typescript)', 'npm', ['pack', '--json', '--pack-destination', OUT], path.join(ROOT, 'clients/typescript')));
const tarball = path.join(OUT, packed.filename);
const wheel = step('the Python wheel', PYTHON, [path.join(ROOT, 'clients/python/scripts/build_wheel.py'), OUT]).trim();
step('pip download (the Python client and its dependencies)', PYTHON, [
  '-m',
  'pip',
  'download',
  '--quiet',
  '--disable-pip-version-check',
  // One try per index: an unreachable one is skipped at once instead of retried with back-off.
  '--retries',
  '0',
  '--timeout',
  '15',
  '--dest',
  path.join(OUT, 'wheelhouse'),
  wheel,
]);
process.stdout.write(`${path.relative(ROOT, tarball)}\n${path.relative(ROOT, wheel)}\n${path.relative(ROOT, path.join(OUT, 'wheelhouse'))}/\n`);
