import { parseDateTime } from '../time.js';

/**
 * When an open task is due (docs/questions.md): the earlier of its deadline and its response target
 * (created_at + RESPONSE_TARGET_HOURS). The console's queue orders open tasks by it and shows the
 * time left. Pure: the store keeps it as `due_at`, fixed at submission.
 */
export interface Due {
  at: Date;
  /** What makes it due then. */
  by: 'deadline' | 'response_target';
}

export function dueOf(task: { created_at: string; deadline: string | null }, targetHours: number): Due {
  const target = new Date(Date.parse(task.created_at) + targetHours * 3_600_000);
  const deadline = task.deadline === null ? null : parseDateTime(task.deadline);
  return deadline !== null && deadline.getTime() < target.getTime() ? { at: deadline, by: 'deadline' } : { at: target, by: 'response_target' };
}
