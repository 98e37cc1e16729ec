// Served hashed by src/web/operator/inbox-assets.ts; progressive enhancement only.
(function () {
  'use strict';
  if (window.__inboxKeys) return;
  window.__inboxKeys = true;
  var HELP = [
    ['j / k', 'next / previous task'],
    ['o', 'open the task'],
    ['/', 'search'],
    ['a', 'accept (task page)'],
    ['r', 'reply (task page)'],
    ['d', 'deliver (task page)'],
    ['x', 'reject (task page)'],
    ['u', 'undo the last action'],
    ['g', 'back to the queue'],
    ['Ctrl+Enter', 'send the form you are typing in'],
    ['?', 'show these keys'],
    ['Esc', 'close this list'],
  ];
  var current = -1;
  function items() {
    return Array.prototype.slice.call(document.querySelectorAll('ul.queue > li[data-task-id]'));
  }
  function mark(index) {
    var list = items();
    if (list.length === 0) return;
    current = Math.max(0, Math.min(list.length - 1, index));
    list.forEach(function (li, i) {
      li.classList.toggle('key-current', i === current);
    });
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
    if (button) button.click();
    else form.submit();
    return true;
  }
  function help() {
    var box = document.getElementById('key-help');
    if (box) {
      box.remove();
      return;
    }
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
  if (helpButton) {
    helpButton.hidden = false;
    helpButton.addEventListener('click', help);
  }
  document.addEventListener('keydown', function (event) {
    var target = event.target;
    var typing = target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
    // Ctrl+Enter (Cmd+Enter) sends the form being typed in: the reply, question, reason or deliverable.
    if ((event.ctrlKey || event.metaKey) && event.key === 'Enter' && typing && target.form) {
      event.preventDefault();
      if (target.form.requestSubmit) target.form.requestSubmit();
      else target.form.submit();
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
      case 'j':
        mark(current + 1);
        break;
      case 'k':
        mark(current - 1);
        break;
      case 'o':
        if (items().length > 0) open();
        else handled = false;
        break;
      case '/':
        handled = focusField('[data-key-search]');
        break;
      case '?':
        help();
        break;
      case 'a':
        handled = submitForm('form[action$="/accept"]');
        break;
      case 'x':
        handled = focusField('form[action$="/reject"] textarea, form[action$="/reject"] input[type=text]') || submitForm('form[action$="/reject"]');
        break;
      case 'r':
        handled = focusField('form[action$="/reply"] textarea') || focusField('form[action$="/questions"] textarea');
        break;
      case 'd':
        handled = focusField('form[action$="/deliver"] textarea, form[action$="/result"] textarea');
        break;
      case 'u':
        handled = submitForm('form[action$="/undo"]');
        break;
      case 'g':
        window.location.href = '/operator';
        break;
      default:
        handled = false;
    }
    if (handled) event.preventDefault();
  });
})();
