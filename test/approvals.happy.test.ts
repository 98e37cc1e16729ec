import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { submit } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';
import { api, json, newOperator } from './team.support.js';

/**
 * Decisions by more than one person over the admin API (docs/approvals.md), with operators signed in
 * by personal keys: their approvals are unsigned (attestation null). The passkey-signed flow runs in
 * Chromium (approvals.browser.happy.test.ts).
 */
describe.each(STORES)('approvals over the admin API on %s', (store) => {
  const t = useTestApp({ store });

  it('proposes, sends back with a reason, proposes again and delivers once at the quorum, with a version 3 receipt', async () => {
    const [a, b, c] = [await newOperator(t), await newOperator(t), await newOperator(t)];
    const id = await submit(t, { approvals: 3, delivery: 'status_poll', contact_email: undefined });
    const publicTask = async () => (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Record<string, unknown>;
    expect((await publicTask()).approvals).toEqual({ required: 3, given: 0 });
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }, a.auth), 200);
    // Nothing proposed yet.
    const early = await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' }, b.auth);
    expect(early.status).toBe(409);
    expect(await early.json()).toMatchObject({ error: 'approval_not_allowed' });

    const proposed = await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'delivered', operator_notes: 'First draft.' }, a.auth), 200);
    expect(proposed.status).toBe('accepted');
    expect(proposed.approvals).toEqual({ required: 3, given: 1 });
    expect(proposed.operator_notes).toBeNull();
    expect(proposed.proposal).toMatchObject({
      proposed_by: a.operator_id,
      operator_notes: 'First draft.',
      approvals: [{ approver: a.operator_id, signed: false }],
    });
    const unreleased = await publicTask();
    expect(unreleased).toMatchObject({ status: 'accepted', operator_notes: null, approvals: { required: 3, given: 1 } });
    expect(JSON.stringify(unreleased)).not.toContain('First draft');
    expect(JSON.stringify(unreleased)).not.toContain(a.operator_id);
    // The requester's status page says where it stands, and shows nothing of the proposal.
    const statusPage = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(statusPage).toContain('1 of 3 approvals');
    expect(statusPage).not.toContain('First draft');

    // The proposer approving their own proposal: refused.
    const own = await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' }, a.auth);
    expect(own.status).toBe(409);
    expect(await own.json()).toMatchObject({ error: 'approval_not_allowed' });

    const returned = await json(
      await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'send_back', reason: 'Add the opening hours.' }, b.auth),
      200,
    );
    expect(returned).toMatchObject({ status: 'accepted', approvals: { required: 3, given: 0 }, proposal: null });
    expect(returned.sent_back).toMatchObject({ by: b.operator_id, reason: 'Add the opening hours.' });

    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'delivered', operator_notes: 'Open 8 to 12 on Sundays.' }, a.auth), 200);
    const second = await json(await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' }, b.auth), 200);
    expect(second).toMatchObject({ status: 'accepted', approvals: { required: 3, given: 2 }, sent_back: null });
    // b approving again: refused, nothing counted.
    expect((await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' }, b.auth)).status).toBe(409);
    const delivered = await json(await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' }, c.auth), 200);
    expect(delivered).toMatchObject({ status: 'delivered', operator_notes: 'Open 8 to 12 on Sundays.', approvals: { required: 3, given: 3 } });
    const payload = decodeJwt(delivered.receipt as string);
    expect(payload.receipt_version).toBe(3);
    expect(payload.approvals).toEqual([
      { key_id: null, at: expect.any(String), attestation: null },
      { key_id: null, at: expect.any(String), attestation: null },
      { key_id: null, at: expect.any(String), attestation: null },
    ]);
    expect(payload.deliverable_sha256).toBe(delivered.deliverable_sha256);
    // After delivery: nothing to approve.
    expect((await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' }, a.auth)).status).toBe(409);

    const audit = await json(await api(t, 'GET', `/api/v1/admin/audit?task_id=${id}`), 200);
    expect((audit.entries as { action: string }[]).map((e) => e.action).reverse()).toEqual([
      'task.accepted',
      'approval.given',
      'approval.returned',
      'approval.given',
      'approval.given',
      'approval.given',
      'task.delivered',
    ]);
  });

  it('keeps one approval by default: a delivery delivers, receipt_version 2, no approvals field', async () => {
    const id = await submit(t);
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }), 200);
    const delivered = await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'delivered', operator_notes: 'Done.' }), 200);
    expect(delivered).not.toHaveProperty('approvals');
    expect(delivered).not.toHaveProperty('proposal');
    expect(decodeJwt(delivered.receipt as string).receipt_version).toBe(2);
    const refused = await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' });
    expect(refused.status).toBe(409);
  });
});
