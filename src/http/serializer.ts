import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

const buildDefault = SerializerSelector();

/**
 * Fastify's own response serializers (fast-json-stringify, with the same options), each compiled
 * when its route first answers with that status instead of at start. Fastify compiles one for
 * every status of every route, HEAD routes included, and each is generated code that stays in
 * memory: most of them (the operator console, the admin API, error statuses) are rarely or never
 * used by a given instance. The output is the same; only the moment of compiling moves.
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = buildDefault(externalSchemas, options);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => {
      serialize ??= compile(route);
      return serialize(data);
    };
  };
};
