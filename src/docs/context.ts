import type { ServiceDeps } from '../services/context.js';
import type { DocumentRegistry } from './document-set.js';
import type { ApiVersionRegistry } from './versions.js';

/**
 * The dependencies of the documents and of the adapters that serve or render them: the service
 * dependencies plus the API version registry and the generated documents, both built once in
 * src/deps.ts.
 */
export interface DocsDeps extends ServiceDeps {
  apiVersions: ApiVersionRegistry;
  /** Given its builder when the app is ready (the OpenAPI document needs every route); generated on first use. */
  documents: DocumentRegistry;
}
