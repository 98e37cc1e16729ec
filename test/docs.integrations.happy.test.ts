import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** docs/integrations.md (issue 30, item 6): every configuration on it parses and names the MCP endpoint. */

const page = readFileSync(path.resolve(import.meta.dirname, '../docs/integrations.md'), 'utf8');
const jsonBlocks = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] as string);

describe('docs/integrations.md', () => {
  it('has the claude mcp add line for the HTTP transport', () => {
    expect(page).toMatch(/claude mcp add --transport http human-tasks http:\/\/localhost:8080\/mcp/);
  });

  it('has configurations that parse and point at /mcp', () => {
    expect(jsonBlocks.length).toBeGreaterThanOrEqual(3);
    for (const block of jsonBlocks) {
      const parsed = JSON.parse(block) as Record<string, Record<string, Record<string, unknown>>>;
      const servers = parsed.mcpServers ?? parsed.servers;
      expect(servers, block).toBeDefined();
      const entry = Object.values(servers ?? {})[0] as Record<string, unknown>;
      expect(JSON.stringify(entry)).toContain('http://localhost:8080/mcp');
    }
  });
});
