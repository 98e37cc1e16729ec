import type { Config } from '../config.js';

/**
 * The limits as every document and the MCP tools publish them, from the running config, so no two
 * places can state different numbers.
 */
export function publicLimits(config: Config) {
  const l = config.limits;
  return {
    request_body_max_bytes: l.maxBodyBytes,
    description_chars: { min: l.descriptionMin, max: l.descriptionMax },
    message_chars: { min: l.messageMin, max: l.messageMax },
    location_detail_max_chars: l.locationDetailMax,
    output_format_requester_from_subject_max_chars: l.shortTextMax,
    budget_usd: { min: 0, max: l.budgetMax, note: 'deprecated; accepted and ignored' },
    task_submissions_per_client: { per_hour: l.tasksPerHour, per_day: l.tasksPerDay },
    messages_per_client: { per_hour: l.messagesPerHour, per_day: l.messagesPerDay },
    status_poll_tasks_per_client_per_day: l.statusPollPerDay,
    reads_per_client_per_minute: l.readsPerMinute,
    services_page_limit: { min: 1, max: l.servicesPageMax },
    duplicate_window_hours: l.duplicateWindowHours,
    idempotency_window_hours: l.idempotencyWindowHours,
    daily_task_cap: l.dailyTaskCap,
    daily_email_cap: l.dailyEmailCap,
    daily_windows_reset: '00:00 UTC',
    auto_block: { refusals_within_24h: l.autoBlockRefusals, blocked_hours: l.autoBlockHours },
    // A Web Bot Auth signed agent is counted by its key, with these limits instead (docs/verified-agents.md).
    verified_agents: {
      task_submissions_per_key: { per_hour: l.verified.tasksPerHour, per_day: l.verified.tasksPerDay },
      messages_per_key: { per_hour: l.verified.messagesPerHour, per_day: l.verified.messagesPerDay },
      status_poll_tasks_per_key_per_day: l.verified.statusPollPerDay,
    },
  };
}
