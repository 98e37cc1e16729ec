import { html, type SafeHtml } from '../../../domain/html.js';
import type { Template, TemplateKind } from '../../../services/console/templates.js';
import type { Session } from '../auth/session.js';
import { INBOX_CSS } from '../inbox-assets.js';
import { csrfField } from '../layout.js';

/** The templates page (docs/inbox.md): canned replies and delivery templates; an admin edits them. */

const KIND_LABELS: Record<TemplateKind, string> = { reply: 'Canned replies', result: 'Delivery templates' };
const KIND_HINTS: Record<TemplateKind, string> = {
  reply: 'Answers to a message, offered under “Use a canned reply” on a task page.',
  result: 'A starting deliverable, offered under “Use a delivery template” on an accepted task.',
};

export interface TemplateDraft {
  kind?: string;
  name?: string;
  body?: string;
}

function fields(prefix: string, draft: TemplateDraft): SafeHtml {
  return html`<div class="field"><label for="${prefix}-kind">Kind</label>
      <select id="${prefix}-kind" name="kind">
        <option value="reply" ${draft.kind === 'reply' ? html`selected` : ''}>Canned reply</option>
        <option value="result" ${draft.kind === 'result' ? html`selected` : ''}>Delivery template</option>
      </select></div>
    <div class="field"><label for="${prefix}-name">Name</label><input id="${prefix}-name" name="name" type="text" maxlength="80" required value="${draft.name ?? ''}"></div>
    <div class="field"><label for="${prefix}-body">Text</label><textarea id="${prefix}-body" name="body" rows="5" maxlength="50000" required>
${draft.body ?? ''}</textarea></div>`;
}

function item(t: Template, session: Session, canEdit: boolean): SafeHtml {
  return html`<li class="card" id="${t.id}">
    <h3>${t.name}</h3>
    <p class="prose quote">${t.body}</p>
    ${
      canEdit
        ? html`<details><summary>Edit “${t.name}”</summary>
      <form method="post" action="/operator/templates/${t.id}">${csrfField(session)}${fields(t.id, t)}
        <div class="row end"><button class="btn" type="submit">Save</button></div></form>
      <form method="post" action="/operator/templates/${t.id}/delete" data-confirm="Delete this template?">${csrfField(session)}
        <div class="row end"><button class="btn danger" type="submit">Delete</button></div></form>
    </details>`
        : ''
    }
  </li>`;
}

export function templatesView(templates: Template[], session: Session, options: { notice?: SafeHtml | undefined; draft?: TemplateDraft } = {}): SafeHtml {
  const canEdit = session.actor.role === 'admin';
  const draft = options.draft ?? { kind: 'reply' };
  return html`<link rel="stylesheet" href="${INBOX_CSS.url}"><p><a href="/operator">← Queue</a></p>
    <div class="page-head"><div><h1>Templates</h1><p class="sub">${canEdit ? 'Add, change or delete them here; every operator can use them.' : 'An admin edits these; you can use them from a task page.'}</p></div></div>
    ${options.notice ?? ''}
    ${(['reply', 'result'] as const).map(
      (kind) => html`<section aria-labelledby="h-${kind}"><h2 id="h-${kind}">${KIND_LABELS[kind]}</h2><p class="sub">${KIND_HINTS[kind]}</p>
      ${
        templates.some((t) => t.kind === kind)
          ? html`<ul class="templates">${templates.filter((t) => t.kind === kind).map((t) => item(t, session, canEdit))}</ul>`
          : html`<p class="card empty">None yet.</p>`
      }</section>`,
    )}
    ${
      canEdit
        ? html`<section class="card" aria-labelledby="add-template"><h2 id="add-template">Add a template</h2>
      <form method="post" action="/operator/templates">${csrfField(session)}${fields('new', draft)}
        <div class="row end"><button class="btn" type="submit">Add template</button></div></form></section>`
        : ''
    }`;
}
