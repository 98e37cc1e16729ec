import type { Migration } from 'kysely';
import * as m001 from './001_initial.js';
import * as m010 from './010_abuse_indexes.js';
import * as m020 from './020_signing_key_slot.js';
import * as m030 from './030_outbox_claims.js';
import * as m040 from './040_revoked_sessions.js';
import * as m065 from './065_webhooks.js';
import * as m070 from './070_attachments.js';
import * as m080 from './080_message_replies.js';
import * as m081 from './081_push.js';
import * as m090 from './090_store_probe.js';
import * as m100 from './100_retention.js';
import * as m110 from './110_test_tasks.js';
import * as m120 from './120_response_schemas.js';
import * as m130 from './130_questions_deadlines.js';
import * as m140 from './140_team.js';
import * as m150 from './150_history_costs.js';
import * as m180 from './180_imported_ids.js';
import * as m190 from './190_team_alerts_counts.js';
import * as m200 from './200_message_states.js';
import * as m210 from './210_inbox_speed.js';
import * as m220 from './220_test_due_index.js';
import * as m230 from './230_outbox_claim_rank.js';
import * as m240 from './240_blocklist_networks.js';
import * as m250 from './250_submission_indexes.js';
import * as m260 from './260_receipt_log.js';
import * as m265 from './265_held_status_once.js';
import * as m270 from './270_passkey_removal.js';
import * as m280 from './280_coverage.js';
import * as m290 from './290_log_timestamps.js';
import * as m295 from './295_verified_agents.js';
import * as m300 from './300_a2a_contexts.js';
import * as m310 from './310_a2a_push_configs.js';
import * as m320 from './320_approvals.js';

/** Every migration, in order. Names sort: keep the numeric prefix. */
export const migrations: Record<string, Migration> = {
  '001_initial': m001,
  '010_abuse_indexes': m010,
  '020_signing_key_slot': m020,
  '030_outbox_claims': m030,
  '040_revoked_sessions': m040,
  '065_webhooks': m065,
  '070_attachments': m070,
  '080_message_replies': m080,
  '081_push': m081,
  '090_store_probe': m090,
  '100_retention': m100,
  '110_test_tasks': m110,
  '120_response_schemas': m120,
  '130_questions_deadlines': m130,
  '140_team': m140,
  '150_history_costs': m150,
  '180_imported_ids': m180,
  '190_team_alerts_counts': m190,
  '200_message_states': m200,
  '210_inbox_speed': m210,
  '220_test_due_index': m220,
  '230_outbox_claim_rank': m230,
  '240_blocklist_networks': m240,
  '250_submission_indexes': m250,
  '260_receipt_log': m260,
  '265_held_status_once': m265,
  '270_passkey_removal': m270,
  '280_coverage': m280,
  '290_log_timestamps': m290,
  '295_verified_agents': m295,
  '300_a2a_contexts': m300,
  '310_a2a_push_configs': m310,
  '320_approvals': m320,
};
