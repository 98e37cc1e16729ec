import type * as ServerModule from '@modelcontextprotocol/sdk/server/index.js';
import type * as TransportModule from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';

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

/** Shares one load between concurrent callers; a failed load is tried again by the next call. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    if (!loading) {
      const attempt = load();
      loading = attempt;
      attempt.catch(() => {
        if (loading === attempt) loading = undefined;
      });
    }
    return loading;
  };
}

/** Protocol constants and schemas only (the server card needs no more). */
export const loadMcpTypes = once(() => import('@modelcontextprotocol/sdk/types.js'));

/** The server, the streamable HTTP transport and the protocol types. */
export const loadMcpSdk = once(async (): Promise<McpSdk> => {
  const [server, transport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    loadMcpTypes(),
  ]);
  return { Server: server.Server, StreamableHTTPServerTransport: transport.StreamableHTTPServerTransport, types };
});
