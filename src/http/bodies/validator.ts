import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema, TUnsafe } from 'typebox';

/**
 * Bodies are validated by the service layer (services/tasks/validation.ts), the one place REST, MCP and
 * the web form share; the route's body schema is there for the serializer and OpenAPI. Query
 * strings, path parameters and headers are checked here, with type coercion (a query is text).
 */
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: true, allErrors: true, strict: false });
ajv.addFormat('date-time', true).addFormat('email', true);

const passThrough = (data: unknown) => ({ value: data });

/** Each schema is compiled by its route's first request, not at start (most routes are rarely used). */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return passThrough;
  let compiled: ValidateFunction | undefined;
  return (data: unknown) => {
    compiled ??= ajv.compile(schema as object);
    const validate = compiled;
    return validate(data) ? { value: data } : { error: Object.assign(new Error('invalid parameters'), { validation: validate.errors }) };
  };
};

/**
 * A route's body schema as it really is here: documentation (OpenAPI, the serializer's view of
 * the route) and not a check, since `validatorCompiler` lets every body through and the service
 * validates it. The schema object is returned as it is; only its type changes, so the handler
 * sees `request.body` as `unknown` and no route can trust a field nothing checked.
 */
export function unvalidatedBody(schema: TSchema): TUnsafe<unknown> {
  return schema as TUnsafe<unknown>;
}
