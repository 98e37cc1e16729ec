/**
 * The web form's side of task submission: turning form strings into the same JSON a REST client
 * sends (so the one validator judges both), and putting the validator's messages back next to the
 * fields they name.
 */

/** The fields the form shows, in order; budget_usd is deprecated and left out. */
export const FORM_FIELDS = [
  'task_type',
  'description',
  'location_required',
  'location_detail',
  'deadline',
  'output_format',
  'delivery',
  'contact_email',
  'requester',
] as const;
export type FormField = (typeof FORM_FIELDS)[number];

/** What the person typed, as text, to put back in the form. */
export type FormValues = Partial<Record<FormField, string>>;

function text(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  // A repeated field arrives as an array: keep the first, as a browser never sends two.
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : undefined;
}

/** The entered values, for redisplay. */
export function formValues(body: unknown): FormValues {
  const source = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const values: FormValues = {};
  for (const field of FORM_FIELDS) {
    const value = text(source, field);
    if (value !== undefined) values[field] = value;
  }
  return values;
}

/**
 * The task payload: empty fields are absent, the checkbox is a boolean, e-mail and short fields
 * are trimmed. Only the form's own fields go through, so a crafted form cannot add others.
 */
export function toTaskPayload(values: FormValues): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const field of FORM_FIELDS) {
    if (field === 'location_required') continue;
    const raw = values[field];
    if (raw === undefined) continue;
    const value = field === 'description' ? raw.replace(/\r\n/g, '\n') : raw.trim();
    if (value.trim() === '') continue;
    payload[field] = value;
  }
  const checkbox = values.location_required;
  payload.location_required = checkbox !== undefined && checkbox !== '' && checkbox !== 'false' && checkbox !== 'off';
  return payload;
}

/**
 * Splits validation details into per-field messages (each detail starts with the field it names,
 * e.g. "description must be …" or "task_type, description is required") and the rest.
 */
export function fieldErrors(details: readonly string[]): { byField: Partial<Record<FormField, string[]>>; general: string[] } {
  const byField: Partial<Record<FormField, string[]>> = {};
  const general: string[] = [];
  const known = new Set<string>(FORM_FIELDS);
  for (const detail of details) {
    const lead = /^([a-z_]+(?:\s*,\s*[a-z_]+)*)\b/.exec(detail)?.[1] ?? '';
    const fields = lead
      .split(',')
      .map((f) => f.trim())
      .filter((f) => known.has(f)) as FormField[];
    if (fields.length === 0) {
      general.push(detail);
      continue;
    }
    for (const field of fields) (byField[field] ??= []).push(fields.length > 1 ? `${field} is required` : detail);
  }
  return { byField, general };
}

/** The fewest words a form description may have: "check it" is too little to act on. */
export const DESCRIPTION_MIN_WORDS = 3;

function words(text: string): number {
  return text.split(/\s+/u).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

/**
 * The web form's own rules, stricter than the API's (the contract keeps location_detail optional
 * and counts only characters): a person who ticks "physically present" says where, and the
 * description has at least DESCRIPTION_MIN_WORDS words. Each problem is a detail in the
 * validator's shape (it starts with the field it names); a field the validator already refused
 * (`already`) gets no second message.
 */
export function formRuleDetails(values: FormValues, already: readonly string[] = []): string[] {
  const details: string[] = [];
  const refused = (field: FormField) => already.some((d) => d.startsWith(`${field} `) || d.startsWith(`${field},`));
  const payload = toTaskPayload(values);
  if (payload.location_required === true && payload.location_detail === undefined && !refused('location_detail'))
    details.push('location_detail is required when someone needs to be physically present: give a city, address or area');
  const description = typeof payload.description === 'string' ? payload.description : '';
  if (description !== '' && words(description) < DESCRIPTION_MIN_WORDS && !refused('description'))
    details.push(`description must have at least ${DESCRIPTION_MIN_WORDS} words: say what to do and what a good result looks like`);
  return details;
}
