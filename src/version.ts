import { readFileSync } from 'node:fs';
import { projectPath } from './paths.js';

const pkg = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { name: string; version: string };

/** Versions come from package.json so no document can disagree with another. */
export const SERVICE_NAME = pkg.name;
export const SERVICE_VERSION = pkg.version;
export const API_VERSION = 'v1';
