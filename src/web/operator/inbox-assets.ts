/**
 * Issue 31's console assets, served beside console.css/console.js (auth-routes.ts) under the same
 * strict CSP: a stylesheet for the toolbar and lists, and the keyboard shortcuts. Progressive
 * enhancement only: every action stays a link or a form without them.
 */

export const INBOX_CSS = String.raw`
.queue-toolbar { margin: 0 0 .75rem; }
.toolbar-row { display: flex; gap: .5rem; }
.toolbar-row input[type=search] { flex: 1; min-width: 0; min-height: 2.75rem; padding: .4rem .7rem; font: inherit; border: 1px solid var(--border); border-radius: 8px; background: var(--surface); color: var(--text); }
.toolbar-sheet { margin-top: .35rem; }
.toolbar-sheet summary, details.snooze summary, details.templates-card summary { cursor: pointer; min-height: 2.75rem; display: flex; align-items: center; color: var(--muted); }
.toolbar-fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: .5rem .75rem; align-items: end; padding: .5rem 0; }
.toolbar-fields label { display: grid; gap: .2rem; font-size: .9rem; }
.toolbar-fields label.check, .bulk-list label.check { display: flex; gap: .5rem; align-items: center; min-height: 2.75rem; }
.toolbar-fields input, .toolbar-fields select, .bulk-actions input { min-height: 2.75rem; font: inherit; }
.toolbar-links { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; }
.toolbar-links a { display: inline-flex; align-items: center; min-height: 2.75rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.bulk-list { list-style: none; padding: 0; margin: 0 0 .75rem; }
.bulk-list input[type=checkbox], .toolbar-fields input[type=checkbox] { width: 1.4rem; height: 1.4rem; }
.bulk-list li { border-bottom: 1px solid var(--border); }
.bulk-list label.check { display: grid; grid-template-columns: auto minmax(0, 1fr); gap: .75rem; align-items: center; padding: .4rem 0; font-weight: normal; }
.bulk-item { display: grid; gap: .15rem; min-width: 0; overflow-wrap: anywhere; }
.bulk-actions { border: 1px solid var(--border); border-radius: 8px; margin: 0 0 .6rem; padding: .5rem .75rem .75rem; display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
.bulk-actions label { display: grid; gap: .2rem; min-width: 0; flex: 1 1 12rem; }
@media (hover: none) { [data-key-help] { display: none; } }
.snoozed-list li { list-style: none; }
details.snooze, details.templates-card { margin: 0 0 .75rem; }
.templates { list-style: none; padding: 0; }
.queue li.key-current a.item, .queue li.key-current { outline: 3px solid var(--accent); outline-offset: 2px; }
.key-help { position: fixed; inset: auto 1rem 1rem auto; max-width: 22rem; z-index: 20; }
.key-help kbd { font-family: ui-monospace, monospace; border: 1px solid var(--border); border-radius: 4px; padding: 0 .3rem; }
`;

/**
 * j/k move through the queue, o opens, / searches, g goes back to the queue, ? shows the list. On
 * a task page: a accepts, r goes to the reply (or question) box, d to the deliverable, x to the
 * reject reason, u undoes a held action; Ctrl+Enter sends the form being typed in. Keys are ignored
 * while typing in a field.
 */
export const KEYS_JS = String.raw`(function () {
  'use strict';
  if (window.__inboxKeys) return;
  window.__inboxKeys = true;
  var HELP = [['j / k', 'next / previous task'], ['o', 'open the task'], ['/', 'search'], ['a', 'accept (task page)'], ['r', 'reply (task page)'], ['d', 'deliver (task page)'], ['x', 'reject (task page)'], ['u', 'undo the last action'], ['g', 'back to the queue'], ['Ctrl+Enter', 'send the form you are typing in'], ['?', 'show these keys'], ['Esc', 'close this list']];
  var current = -1;
  function items() { return Array.prototype.slice.call(document.querySelectorAll('ul.queue > li[data-task-id]')); }
  function mark(index) {
    var list = items();
    if (list.length === 0) return;
    current = Math.max(0, Math.min(list.length - 1, index));
    list.forEach(function (li, i) { li.classList.toggle('key-current', i === current); });
    var link = list[current].querySelector('a');
    if (link) link.focus();
    list[current].scrollIntoView({ block: 'nearest' });
  }
  function open() {
    var list = items();
    var li = list[current] || list[0];
    var link = li && li.querySelector('a[href^="/operator/tasks/"]');
    if (link) window.location.href = link.getAttribute('href');
  }
  function focusField(selector) {
    var field = document.querySelector(selector);
    if (!field) return false;
    var details = field.closest('details');
    if (details) details.open = true;
    field.focus();
    field.scrollIntoView({ block: 'center' });
    return true;
  }
  function submitForm(selector) {
    var form = document.querySelector(selector);
    if (!form) return false;
    var button = form.querySelector('button[type=submit], button:not([type])');
    if (button) button.click(); else form.submit();
    return true;
  }
  function help() {
    var box = document.getElementById('key-help');
    if (box) { box.remove(); return; }
    box = document.createElement('div');
    box.id = 'key-help';
    box.className = 'card key-help';
    box.setAttribute('role', 'dialog');
    box.setAttribute('aria-label', 'Keyboard shortcuts');
    var title = document.createElement('h2');
    title.textContent = 'Keyboard shortcuts';
    box.appendChild(title);
    var list = document.createElement('dl');
    HELP.forEach(function (pair) {
      var dt = document.createElement('dt');
      var kbd = document.createElement('kbd');
      kbd.textContent = pair[0];
      dt.appendChild(kbd);
      var dd = document.createElement('dd');
      dd.textContent = pair[1];
      list.appendChild(dt);
      list.appendChild(dd);
    });
    box.appendChild(list);
    document.body.appendChild(box);
  }
  var helpButton = document.querySelector('[data-key-help]');
  if (helpButton) { helpButton.hidden = false; helpButton.addEventListener('click', help); }
  document.addEventListener('keydown', function (event) {
    var target = event.target;
    var typing = target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
    // Ctrl+Enter (Cmd+Enter) sends the form being typed in: the reply, question, reason or deliverable.
    if ((event.ctrlKey || event.metaKey) && event.key === 'Enter' && typing && target.form) {
      event.preventDefault();
      if (target.form.requestSubmit) target.form.requestSubmit(); else target.form.submit();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === 'Escape') {
      var box = document.getElementById('key-help');
      if (box) box.remove();
      if (typing) target.blur();
      return;
    }
    if (typing) return;
    var handled = true;
    switch (event.key) {
      case 'j': mark(current + 1); break;
      case 'k': mark(current - 1); break;
      case 'o': if (items().length > 0) open(); else handled = false; break;
      case '/': handled = focusField('[data-key-search]'); break;
      case '?': help(); break;
      case 'a': handled = submitForm('form[action$="/accept"]'); break;
      case 'x': handled = focusField('form[action$="/reject"] textarea, form[action$="/reject"] input[type=text]') || submitForm('form[action$="/reject"]'); break;
      case 'r': handled = focusField('form[action$="/reply"] textarea') || focusField('form[action$="/questions"] textarea'); break;
      case 'd': handled = focusField('form[action$="/deliver"] textarea, form[action$="/result"] textarea'); break;
      case 'u': handled = submitForm('form[action$="/undo"]'); break;
      case 'g': window.location.href = '/operator'; break;
      default: handled = false;
    }
    if (handled) event.preventDefault();
  });
})();
`;

/**
 * Templates without a reload: "Use" puts the chosen template's text into the box it is for (the
 * deliverable, or the reply box of the sender's latest message) and focuses it; the box's own
 * script (the live hash of the deliverable) hears an input event. Without this script "Use"
 * reloads the page with the box filled by the server.
 */
export const TEMPLATES_JS = String.raw`(function () {
  'use strict';
  document.querySelectorAll('form[data-template-target]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      var box = document.getElementById(form.getAttribute('data-template-target'));
      var select = form.querySelector('select[name=template]');
      var option = select && select.options[select.selectedIndex];
      if (!box || !option || !option.hasAttribute('data-body')) return;
      event.preventDefault();
      box.value = option.getAttribute('data-body');
      box.dispatchEvent(new Event('input', { bubbles: true }));
      var details = box.closest('details');
      if (details) details.open = true;
      box.focus();
      box.scrollIntoView({ block: 'center' });
    });
  });
})();
`;
