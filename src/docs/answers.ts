import { EXAMPLE_ANSWER_DESCRIPTION, EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../domain/answers/answer-example.js';
import { RESPONSE_SCHEMA_KEYWORDS, RESPONSE_SCHEMA_MAX_BYTES, RESPONSE_SCHEMA_MAX_DEPTH } from '../domain/answers/response-schema.js';
import type { Block } from '../domain/markup.js';
import { API_VERSION } from '../version.js';

/**
 * The worked example of structured answers (docs/answers.md) as every document shows it: OpenAPI,
 * llms.txt, api.md and /agent.json all take it from here (and from domain/answers/answer-example.ts), so
 * they cannot tell different stories.
 */

type Json = Record<string, unknown>;

export function exampleStructuredRequest(): Json {
  return {
    task_type: 'real_world_verification',
    description: EXAMPLE_ANSWER_DESCRIPTION,
    location_required: true,
    location_detail: 'Paris 11e',
    delivery: 'status_poll',
    response_schema: EXAMPLE_RESPONSE_SCHEMA,
  };
}

const HOW =
  `Add response_schema (JSON Schema 2020-12, top level "type": "object", at most ${RESPONSE_SCHEMA_MAX_BYTES / 1024} KB and ${RESPONSE_SCHEMA_MAX_DEPTH} levels; ` +
  `keywords ${RESPONSE_SCHEMA_KEYWORDS.join(', ')}; $ref to "#/$defs/..." only) to get the answer back as JSON: the operator fills a form made from it, ` +
  'the service validates the answer against it, and once delivered the task carries it as result (operator_notes holds its RFC 8785 canonical JSON, which deliverable_sha256 and the receipt sign). ' +
  'A schema outside that subset is 422 validation_failed with a detail naming response_schema and the JSON pointer of the keyword.';

/** /agent.json: how to ask for a structured answer, with the worked example. */
export function structuredAnswersBlock(): Json {
  return { how: HOW, example: { request: exampleStructuredRequest(), result: EXAMPLE_RESULT } };
}

/** llms.txt: the section's lines. */
export function structuredAnswerLines(base: string): string[] {
  return [
    '## Structured answers',
    '',
    `- [Ask for JSON back](${base}/api.md#structured-answers): ${HOW}`,
    `- [Example request](${base}/api/${API_VERSION}/tasks): POST \`${JSON.stringify(exampleStructuredRequest())}\``,
    `- [Its result once delivered](${base}/api/${API_VERSION}/tasks/TASK_ID): GET the task; result is \`${JSON.stringify(EXAMPLE_RESULT)}\``,
    '',
  ];
}

/** api.md: the section. */
export function structuredAnswerBlocks(base: string): Block[] {
  return [
    { h: 2, text: 'Structured answers' },
    { p: HOW },
    { p: `Example: the request (\`POST ${base}/api/${API_VERSION}/tasks\`) asking "is the shop open, and what are the hours?"` },
    { code: JSON.stringify(exampleStructuredRequest(), null, 2), lang: 'json' },
    { p: 'The task once delivered: `result` (null before) is the answer, valid against the schema; `operator_notes` is its canonical JSON.' },
    { code: JSON.stringify({ status: 'delivered', result: EXAMPLE_RESULT }, null, 2), lang: 'json' },
  ];
}

/** OpenAPI: the example of the task request body. */
export function addStructuredAnswerExample(paths: Record<string, Record<string, Json>>): void {
  const media = ((paths[`/api/${API_VERSION}/tasks`]?.post?.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.[
    'application/json'
  ];
  if (!media) return;
  media.examples = {
    ...((media.examples as Json | undefined) ?? {}),
    structured_answer: { summary: 'Is the shop open, and what are the hours? (with a response_schema)', value: exampleStructuredRequest() },
  };
}
