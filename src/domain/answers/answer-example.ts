/**
 * The one worked example of a structured answer (docs/answers.md), shown by every document (OpenAPI,
 * llms.txt, api.md, /agent.json, the catalog) so they cannot drift apart: a task asking whether a
 * shop is open and what its hours are, its response_schema, and the result the operator delivers.
 */

export const EXAMPLE_ANSWER_DESCRIPTION =
  'Is the bakery "Le Fournil" at 12 rue Oberkampf, Paris open on Sundays, and what are its opening hours? Check the sign on the door or ask in person.';

export const EXAMPLE_RESPONSE_SCHEMA = {
  type: 'object',
  title: 'Shop opening check',
  properties: {
    open_on_sundays: { type: 'boolean', title: 'Open on Sundays?' },
    checked_on: { type: 'string', format: 'date', title: 'Checked on' },
    how_checked: { type: 'string', enum: ['in_person', 'phone', 'sign_on_door', 'website'], title: 'How it was checked' },
    hours: {
      type: 'array',
      title: 'Opening hours',
      description: 'One row per day the shop opens.',
      maxItems: 14,
      items: {
        type: 'object',
        properties: {
          day: { type: 'string', enum: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'], title: 'Day' },
          opens: { type: 'string', minLength: 5, maxLength: 5, title: 'Opens (HH:MM, local time)' },
          closes: { type: 'string', minLength: 5, maxLength: 5, title: 'Closes (HH:MM, local time)' },
        },
        required: ['day', 'opens', 'closes'],
        additionalProperties: false,
      },
    },
    note: { type: 'string', maxLength: 500, title: 'Anything else worth knowing' },
  },
  required: ['open_on_sundays', 'checked_on', 'how_checked', 'hours'],
  additionalProperties: false,
} as const;

export const EXAMPLE_RESULT = {
  open_on_sundays: true,
  checked_on: '2030-03-10',
  how_checked: 'sign_on_door',
  hours: [
    { day: 'saturday', opens: '07:30', closes: '19:30' },
    { day: 'sunday', opens: '08:00', closes: '13:00' },
  ],
  note: 'Closed on Mondays.',
} as const;
