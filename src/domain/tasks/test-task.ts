/**
 * service-spec "Limits": "marking the description or requester with the word test makes the
 * operator treat it as a test". The whole word only, in any case: "test", "Test", "TEST",
 * "test-run", "(test)" count; "contest", "attestation", "testing", "tests", "test_1" do not (a
 * letter, digit or underscore next to it makes it another word). One rule for REST, MCP and the
 * web form: it is applied once, at submission, and stored with the task.
 */
const TEST_WORD = /(?<![\p{L}\p{N}_])test(?![\p{L}\p{N}_])/iu;

export function isTestTask(fields: { description: string; requester?: string | null | undefined }): boolean {
  return TEST_WORD.test(fields.description) || (fields.requester != null && TEST_WORD.test(fields.requester));
}
