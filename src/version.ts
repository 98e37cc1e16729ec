import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

/** Versions come from package.json so no document can disagree with another. */
export const SERVICE_NAME = pkg.name;
export const SERVICE_VERSION = pkg.version;
export const API_VERSION = 'v1';
