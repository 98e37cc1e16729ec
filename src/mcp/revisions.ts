/**
 * The MCP protocol revisions /mcp serves, newest first: 2026-07-28 (stateless requests carrying
 * the version in `_meta`, `server/discover`; SDK v2, modern.ts) and 2025-11-25 (`initialize`; SDK
 * v1, mcp-server.ts, which also negotiates the older 2025-06-18 and 2025-03-26). One list for the
 * server card, /agent.json and llms.txt.
 */
export const MCP_REVISIONS = ['2026-07-28', '2025-11-25'] as const;

export const MCP_REVISIONS_NOTE =
  'Protocol revisions 2026-07-28 (stateless: each request carries its protocol version; server/discover; tasks extension io.modelcontextprotocol/tasks) and 2025-11-25 (initialize; MCP tasks).';
