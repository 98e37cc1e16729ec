import { html, type SafeHtml } from '../../../domain/html.js';
import type { OperatorAttachment } from '../../../services/attachments/attachments.js';
import type { Session } from '../auth/session.js';
import { csrfField } from '../layout.js';

/**
 * The task page's evidence files: the list (thumbnail, name, size, SHA-256) and, while the task
 * is accepted, the picker. `accept` lists image/* and video/* first so a phone offers its camera,
 * and `*\/*` (any type) so any file can still be chosen; no `capture`, which would force the camera.
 * Uploading needs JavaScript (raw-body XHR with progress); without it the admin API takes files.
 */

export interface FilesViewOptions {
  taskId: string;
  status: string;
  files: OperatorAttachment[];
  session: Session;
  locationRequired: boolean;
  maxPerTask: number;
  maxBytes: number;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function item(options: FilesViewOptions, file: OperatorAttachment): SafeHtml {
  const base = `/operator/tasks/${options.taskId}/attachments/${file.attachment_id}`;
  return html`<li class="file">
    ${file.has_thumbnail ? html`<img src="${base}/thumbnail" alt="" width="64" height="64" loading="lazy">` : html`<span class="file-icon" aria-hidden="true">${file.media_type.split('/')[0] === 'video' ? '▶' : '📄'}</span>`}
    <div class="file-meta">
      <a href="${base}" download>${file.name}</a> <span class="sub">${file.media_type} · ${size(file.size)}</span>${file.metadata_kept ? html` <span class="badge warn">metadata kept</span>` : ''}
      <details class="tech"><summary>Technical details</summary><code class="mono file-hash">sha256 ${file.sha256}</code></details>
    </div>
    ${
      options.status === 'accepted'
        ? html`<form method="post" action="${base}/remove">${csrfField(options.session)}<button class="btn small ghost" type="submit" aria-label="Remove ${file.name}">Remove</button></form>`
        : ''
    }
  </li>`;
}

export function filesView(options: FilesViewOptions): SafeHtml {
  const { files, status } = options;
  if (status !== 'accepted' && files.length === 0) return html``;
  const open = status === 'accepted';
  const privacy = options.locationRequired
    ? html`<p class="flash error" role="note" id="metadata-note"><strong>Photo metadata is kept for this task</strong> (it requires a location): the requester will see where and when each photo was taken, and the camera. Remove a photo if that is not wanted.</p>`
    : html`<p class="hint" id="metadata-note">Photo metadata (EXIF, GPS, camera) is removed before the hash is taken.</p>`;
  return html`<section class="card" aria-labelledby="files-h">
    <h2 id="files-h">Files <span class="sub">${files.length} of ${options.maxPerTask}</span></h2>
    ${open ? privacy : ''}
    ${files.length > 0 ? html`<ul class="files" id="file-list">${files.map((f) => item(options, f))}</ul>` : html`<p class="sub" id="file-list">No files attached.</p>`}
    ${
      open
        ? html`<div class="dropzone" data-upload="/operator/tasks/${options.taskId}/attachments" data-csrf="${options.session.csrf}" data-max-bytes="${options.maxBytes}">
      <label class="btn secondary" for="file-input">Add photos or files</label>
      <input id="file-input" class="file-input" type="file" name="files" multiple accept="image/*,video/*,*/*">
      <p class="hint">Choose several at once, take a photo on a phone, or drop files here. Up to ${size(options.maxBytes)} each; they are signed into the receipt on delivery and frozen from then on.</p>
      <ul class="uploads" aria-live="polite"></ul>
      <noscript><p class="hint">Uploading here needs JavaScript. Without it: <code>POST /api/v1/admin/tasks/${options.taskId}/attachments</code> with the file as the body.</p></noscript>
    </div>`
        : ''
    }
  </section>`;
}
