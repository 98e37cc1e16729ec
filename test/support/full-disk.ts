import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Mounting a small tmpfs needs root; suites that fill a disk skip without it. */
export const canMountTmpfs = process.getuid?.() === 0;

/** A 3 MB tmpfs in a fresh folder, for a store on a disk that fills up. */
export function mountSmallTmpfs(prefix: string): string {
  const mount = mkdtempSync(path.join(tmpdir(), prefix));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', mount]);
  return mount;
}

export function unmountTmpfs(mount: string): void {
  execFileSync('umount', ['-l', mount]);
  rmSync(mount, { recursive: true, force: true });
}

/** Fills every free block: 64 KB chunks, then smaller ones, then single bytes, until ENOSPC. */
export function fillDisk(mount: string): void {
  for (const size of [65_536, 4096, 1]) {
    for (let i = 0; ; i += 1) {
      try {
        writeFileSync(path.join(mount, `filler-${size}-${i}`), Buffer.alloc(size));
      } catch {
        break;
      }
    }
  }
}

/** Gives the space fillDisk took back. */
export function freeDisk(mount: string): void {
  execFileSync('sh', ['-c', `rm -f ${mount}/filler-*`]);
}
