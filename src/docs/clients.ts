/** The client libraries (contract, "Clients"), named the same way in llms.txt and on /docs. */
export const CLIENT_LIBRARIES = [
  {
    language: 'TypeScript',
    package: 'human-task-client',
    path: 'clients/typescript',
    what: 'typed client (Node 20+, Deno, Bun, browsers, edge) and the `htask` CLI',
  },
  { language: 'Python', package: 'human-task-client', path: 'clients/python', what: 'module `human_task_client`, sync and async, on httpx' },
] as const;

export const CLIENTS_SUMMARY =
  'They submit with an Idempotency-Key, wait by long-polling while honouring Retry-After and RateLimit-Reset, and verify receipts and webhooks against /.well-known/jwks.json.';

export function clientLines(): string[] {
  return CLIENT_LIBRARIES.map((c) => `- ${c.language}: \`${c.package}\` (\`${c.path}/\` in the service's source): ${c.what}`);
}
