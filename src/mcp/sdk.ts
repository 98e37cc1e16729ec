import type * as ServerModule from '@modelcontextprotocol/sdk/server/index.js';
import type * as TransportModule from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import { loadOnce } from '../domain/load-once.js';

/**
 * The MCP SDK is loaded on first use (the first MCP request or server card), not at start: its
 * protocol schemas (zod) and validators cost several MB of resident memory in an instance that may
 * never see an MCP client. Nothing here imports the SDK's runtime code statically: a static import
 * anywhere would load it at start again, since the bundle keeps packages external.
 */

export type McpTypes = typeof TypesModule;

export interface McpSdk {
  Server: typeof ServerModule.Server;
  StreamableHTTPServerTransport: typeof TransportModule.StreamableHTTPServerTransport;
  types: McpTypes;
}

/** Protocol constants and schemas only (the server card needs no more). */
export const loadMcpTypes = loadOnce(() => import('@modelcontextprotocol/sdk/types.js'));

/** The server, the streamable HTTP transport and the protocol types. */
export const loadMcpSdk = loadOnce(async (): Promise<McpSdk> => {
  const [server, transport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    loadMcpTypes(),
  ]);
  return { Server: server.Server, StreamableHTTPServerTransport: transport.StreamableHTTPServerTransport, types };
});
