import { describe, expect, it } from 'vitest';
import { call, type Json, texts, useMcpClient } from './mcp.support.js';
import { useTestApp } from './support/app.js';

/**
 * The arguments a tool handler reads itself are checked against the tool's own input schema (the
 * one tools/list publishes), every failing field at once and in the schema's order, each with the
 * sentence a model can act on. A required id sent as null or "" is missing; an optional argument
 * sent as null is absent.
 */

async function details(result: Awaited<ReturnType<typeof call>>): Promise<unknown> {
  expect(result.isError).toBe(true);
  expect(result.structuredContent.error).toBe('validation_failed');
  expect(JSON.parse(texts(result)[0]!)).toEqual(result.structuredContent);
  return (result.structuredContent as Json).details;
}

const WAIT = 'wait_seconds must be a whole number from 0 to 50';
const KNOWN = 'known_updated_at must be the updated_at string of the task you hold';

describe('MCP tool arguments checked from the tool schema', () => {
  const t = useTestApp();
  const client = useMcpClient(t);

  it('check_task_status: every wrong argument at once, in the schema order', async () => {
    expect(await details(await call(client, 'check_task_status', { known_updated_at: 5, wait_seconds: 51, task_id: '' }))).toEqual([
      'task_id is required',
      WAIT,
      KNOWN,
    ]);
    expect(await details(await call(client, 'check_task_status', { task_id: null, wait_seconds: 1.5 }))).toEqual(['task_id is required', WAIT]);
    for (const wait of ['5', -1, true, '']) {
      expect(await details(await call(client, 'check_task_status', { task_id: 'task-2030-00000000000000000000000000000000', wait_seconds: wait }))).toEqual([
        WAIT,
      ]);
    }
    expect(await details(await call(client, 'check_task_status', { task_id: ['task'], known_updated_at: 'x'.repeat(65) }))).toEqual([
      'task_id must be a string',
      KNOWN,
    ]);
  });

  it('check_task_status: optional arguments sent as null are absent; an empty known_updated_at is a value', async () => {
    for (const args of [
      { wait_seconds: null, known_updated_at: null },
      { wait_seconds: 0, known_updated_at: '' },
    ]) {
      const result = await call(client, 'check_task_status', { task_id: 'task-2030-00000000000000000000000000000000', ...args });
      expect(result.isError).toBe(true);
      expect(result.structuredContent.error).toBe('task_not_found');
    }
  });

  it('answer_operator_question: both ids checked before the answer, the answer by the service', async () => {
    expect(await details(await call(client, 'answer_operator_question', {}))).toEqual(['task_id is required', 'question_id is required']);
    expect(await details(await call(client, 'answer_operator_question', { task_id: 5, question_id: 'q'.repeat(201), answer: 'yes' }))).toEqual([
      'task_id must be a string of at most 200 characters',
      'question_id must be a string of at most 200 characters',
    ]);
    const unknown = await call(client, 'answer_operator_question', { task_id: 'task-2030-00000000000000000000000000000000', question_id: '', answer: 'yes' });
    expect(await details(unknown)).toEqual(['question_id is required']);
  });
});
