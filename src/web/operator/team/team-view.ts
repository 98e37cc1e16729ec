import { html, type SafeHtml } from '../../../domain/html.js';
import type { Actor } from '../../../domain/team/actor.js';
import type { KeyView, Operator } from '../../../domain/team/team-schemas.js';
import type { Session } from '../auth/session.js';
import { csrfField, when } from '../layout.js';

/** The team page: yourself (duty, personal keys) for everyone; the operators and invites for admins. */
export interface TeamViewOptions {
  session: Session;
  now: Date;
  /** The signed-in operator (absent for the owner). */
  me?: Operator | undefined;
  keys: KeyView[];
  /** Every operator, for admins only. */
  operators?: Operator[] | undefined;
  notice?: SafeHtml | undefined;
  /** A secret shown once: a new key or an invite link. */
  secret?: { label: string; value: string } | undefined;
}

function yourself(options: TeamViewOptions): SafeHtml {
  const { session, me, keys, now } = options;
  if (!me)
    return html`<section class="card"><h2>You</h2><p class="sub">You signed in with ADMIN_KEY (the owner). Personal keys and duty belong to operators: invite yourself below to get them.</p></section>`;
  return html`<section class="card" aria-labelledby="you"><h2 id="you">You: ${me.name}</h2>
    <p class="sub">${me.email} · ${me.role}</p>
    <form method="post" action="/operator/duty" class="row">${csrfField(session)}
      <input type="hidden" name="on_duty" value="${me.on_duty ? '0' : '1'}">
      <span>${me.on_duty ? 'On duty: new tasks alert you.' : 'Off duty.'}</span>
      <button class="btn small" type="submit">${me.on_duty ? 'Go off duty' : 'Go on duty'}</button>
    </form>
    <h3>Personal keys</h3>
    ${keys.length === 0 ? html`<p class="sub">No keys yet.</p>` : ''}
    <ul>${keys.map(
      (key) =>
        html`<li><span class="mono">${key.key_id}</span> <span class="sub">created ${when(key.created_at, now)}${key.revoked_at ? html`, revoked ${when(key.revoked_at, now)}` : ''}</span>${
          key.revoked_at
            ? ''
            : html`<form method="post" action="/operator/keys/${key.key_id}/revoke" class="inline">${csrfField(session)}<button class="btn small ghost" type="submit">Revoke</button></form>`
        }</li>`,
    )}</ul>
    <form method="post" action="/operator/keys">${csrfField(session)}<button class="btn small" type="submit">Create a personal key</button></form>
  </section>`;
}

function operatorsTable(session: Session, operators: Operator[]): SafeHtml {
  return html`<section class="card" aria-labelledby="ops"><h2 id="ops">Operators</h2>
    <table><thead><tr><th>Name</th><th>E-mail</th><th>Role</th><th>State</th><th></th></tr></thead><tbody>${operators.map(
      (op) => html`<tr data-operator="${op.operator_id}"><td>${op.name}</td><td>${op.email}</td>
        <td><form method="post" action="/operator/team/${op.operator_id}" class="inline">${csrfField(session)}
          <select name="role" aria-label="Role of ${op.name}">${['operator', 'admin'].map(
            (role) => html`<option value="${role}" ${op.role === role ? html`selected` : ''}>${role}</option>`,
          )}</select><button class="btn small ghost" type="submit">Change</button></form></td>
        <td>${op.disabled ? 'disabled' : op.on_duty ? 'on duty' : 'off duty'}</td>
        <td><form method="post" action="/operator/team/${op.operator_id}" class="inline">${csrfField(session)}
          <input type="hidden" name="disabled" value="${op.disabled ? 'false' : 'true'}">
          <button class="btn small ghost" type="submit">${op.disabled ? 'Enable' : 'Disable'}</button></form></td></tr>`,
    )}</tbody></table>
    <h3>Invite an operator</h3>
    <form method="post" action="/operator/team/invite">${csrfField(session)}
      <div class="field"><label for="op-name">Name</label><input id="op-name" name="name" maxlength="100" required></div>
      <div class="field"><label for="op-email">E-mail</label><input id="op-email" name="email" type="email" maxlength="254" required></div>
      <div class="field"><label for="op-role">Role</label><select id="op-role" name="role"><option value="operator">operator</option><option value="admin">admin</option></select></div>
      <button class="btn" type="submit">Create the invite link</button>
    </form>
  </section>`;
}

export function teamView(options: TeamViewOptions): SafeHtml {
  return html`<h1>Team</h1>
    ${options.notice ?? ''}
    ${options.secret ? html`<div class="flash ok" role="status"><strong>${options.secret.label}</strong> <span class="mono" id="secret">${options.secret.value}</span><p class="sub">Shown once: copy it now.</p></div>` : ''}
    ${yourself(options)}
    ${options.operators ? operatorsTable(options.session, options.operators) : ''}`;
}

/** Whether the actor manages the team (sees every operator and invites). */
export function managesTeam(actor: Actor): boolean {
  return actor.role === 'admin';
}
