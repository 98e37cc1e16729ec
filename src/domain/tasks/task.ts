import { comparisonKey } from '../text.js';

/** The task lifecycle of service-spec.md "States and transitions": pure rules, no I/O. */

export const TASK_TYPES = [
  'real_world_verification',
  'product_or_app_testing',
  'human_judgment_and_feedback',
  'data_collection',
  'local_physical_task',
  'ai_output_review',
  'prompt_and_workflow_testing',
  'simulation_and_automation_testing',
  'accessibility_and_usability_check',
  'custom_human_in_the_loop',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

/** The schema enum lists all six; `under_review` and `in_progress` are retired and never set. */
export const ALL_STATUSES = ['submitted', 'under_review', 'in_progress', 'accepted', 'delivered', 'rejected'] as const;
export type TaskStatus = (typeof ALL_STATUSES)[number];
export const CURRENT_STATUSES = ['submitted', 'accepted', 'delivered', 'rejected'] as const;
export const FINAL_STATUSES: readonly TaskStatus[] = ['delivered', 'rejected'];
/** Still waiting on the operator; the retired two only on imported tasks (docs/import.md). */
export const OPEN_STATUSES: readonly TaskStatus[] = ['submitted', 'under_review', 'in_progress', 'accepted'];
/** How a person reads a status (status page, console). */
export const STATUS_LABELS: Record<TaskStatus, string> = {
  submitted: 'Submitted',
  under_review: 'Under review',
  in_progress: 'In progress',
  accepted: 'Accepted',
  delivered: 'Delivered',
  rejected: 'Rejected',
};

export const DELIVERY_MODES = ['email', 'status_poll'] as const;
export type Delivery = (typeof DELIVERY_MODES)[number];

export const SOURCES = ['api', 'web_form'] as const;
export type Source = (typeof SOURCES)[number];

export const OUTPUT_FORMATS = ['text_report', 'text_report_with_photos', 'structured_json', 'annotated_screenshots', 'video'] as const;

const OUTPUT_FORMAT_LABELS: Record<string, string> = {
  text_report: 'Text report',
  text_report_with_photos: 'Text report with photos',
  structured_json: 'Structured answer (JSON)',
  annotated_screenshots: 'Annotated screenshots',
  video: 'Video',
};

/** An output format as people read it (the status page, the console); a free-text format as given. */
export function outputFormatLabel(format: string): string {
  return OUTPUT_FORMAT_LABELS[format] ?? format;
}

const ALLOWED: Record<string, readonly TaskStatus[]> = {
  submitted: ['accepted', 'rejected'],
  // Retired statuses exist only on imported tasks: they continue as a submitted task would.
  under_review: ['accepted', 'rejected'],
  in_progress: ['accepted', 'rejected'],
  accepted: ['delivered', 'rejected'],
};

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return ALLOWED[from]?.includes(to) ?? false;
}

export function isFinal(status: TaskStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

export interface StatusEntry {
  status: TaskStatus;
  at: string;
}

/** The description key of duplicate detection: the text's comparison form (domain/text.ts). */
export function normalizeDescription(description: string): string {
  return comparisonKey(description);
}
