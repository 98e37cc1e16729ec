/**
 * The public pages' one script, served from /assets/pages.js under `script-src 'self'`. Progressive
 * enhancement only: every page reads and every form works without it.
 * - times: the server writes UTC in `<time datetime data-local>`; this shows the reader's local
 *   time with a relative time ("in 3 hours", "2 hours ago") and keeps UTC in the tooltip;
 * - the submission form's deadline is typed in local time and sent with the browser's offset
 *   (`deadline_offset`, minutes east of UTC), so it is stored with its offset.
 */
export const PAGES_JS = String.raw`
(function () {
  'use strict';
  var rtf = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }) : null;
  function relative(ms) {
    if (!rtf) return '';
    var s = (ms - Date.now()) / 1000, a = Math.abs(s);
    if (a < 60) return rtf.format(0, 'second');
    if (a < 3600) return rtf.format(Math.round(s / 60), 'minute');
    if (a < 86400) return rtf.format(Math.round(s / 3600), 'hour');
    return rtf.format(Math.round(s / 86400), 'day');
  }
  function zone() {
    try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'your time zone'; } catch (e) { return 'your time zone'; }
  }
  document.querySelectorAll('time[data-local]').forEach(function (el) {
    var d = new Date(el.getAttribute('datetime'));
    if (isNaN(d.getTime())) return;
    var utc = el.textContent;
    var local = d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
    var rel = relative(d.getTime());
    el.textContent = rel ? local + ' (' + rel + ')' : local;
    el.title = utc;
  });
  var deadline = document.getElementById('f-deadline');
  if (deadline && deadline.form) {
    var label = document.querySelector('label[for="f-deadline"]');
    if (label) label.textContent = 'Deadline (optional, your time: ' + zone() + ')';
    var hint = document.getElementById('h-deadline');
    if (hint) hint.textContent = 'When the result is needed by, in your time zone; it is stored with its UTC offset.';
    var offset = document.createElement('input');
    offset.type = 'hidden';
    offset.name = 'deadline_offset';
    deadline.form.appendChild(offset);
    deadline.form.addEventListener('submit', function () {
      var chosen = new Date(deadline.value);
      offset.value = deadline.value && !isNaN(chosen.getTime()) ? String(-chosen.getTimezoneOffset()) : '';
    });
  }
})();
`;
