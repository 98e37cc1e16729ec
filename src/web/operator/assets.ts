/**
 * The console's stylesheet and script, served from /operator/assets/ so the pages can run under a
 * strict Content-Security-Policy (no inline script or style at all). The script is progressive
 * enhancement only: every form works without it.
 */

export const CONSOLE_CSS = String.raw`
:root {
  --bg: #f5f6f8; --surface: #fff; --text: #18202c; --muted: #5d6778; --border: #e2e5ea; --soft: #f0f2f5;
  --accent: #3553d6; --accent-text: #fff; --focus: #8fa6ff;
  --submitted: #9a4d00; --submitted-bg: #fff1de; --accepted: #1d5fd6; --accepted-bg: #e6eeff;
  --delivered: #0b7445; --delivered-bg: #e2f5ea; --rejected: #b0261b; --rejected-bg: #fde9e7;
  --retired: #5d6778; --retired-bg: #eceef2; --warn: #8a5300; --warn-bg: #fff4d6; --danger: #b0261b;
  --radius: 10px; --shadow: 0 1px 2px rgba(16, 24, 40, .06), 0 1px 3px rgba(16, 24, 40, .08);
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0f1318; --surface: #171c23; --text: #e6e9ee; --muted: #98a2b3; --border: #2a313b; --soft: #1e242d;
    --accent: #7d95ff; --accent-text: #0b0f14; --focus: #7d95ff;
    --submitted: #ffb35c; --submitted-bg: #3a2810; --accepted: #8fb1ff; --accepted-bg: #1a2744;
    --delivered: #5fd39a; --delivered-bg: #11301f; --rejected: #ff8f85; --rejected-bg: #3d1714;
    --retired: #98a2b3; --retired-bg: #252b34; --warn: #ffcf66; --warn-bg: #3a2c0c; --danger: #ff8f85;
    --shadow: none;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
/* Links inside text are underlined: colour alone does not mark them (WCAG 1.4.1). */
p a, td a, li > a:not(.item):not(.btn), dd a { text-decoration: underline; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 4px; }
h1 { font-size: 1.45rem; line-height: 1.25; margin: 0 0 .25rem; letter-spacing: -.01em; }
h2 { font-size: 1.05rem; margin: 0 0 .75rem; }
h3 { font-size: .95rem; margin: 0 0 .5rem; }
p { margin: 0 0 .75rem; }
.skip { position: absolute; left: -999px; top: 0; background: var(--surface); padding: .5rem 1rem; z-index: 10; min-height: 2.75rem; display: flex; align-items: center; }
.skip:focus { left: .5rem; }
.topbar { background: var(--surface); border-bottom: 1px solid var(--border); position: sticky; top: 0; z-index: 5; }
.topbar-inner { max-width: 1120px; margin: 0 auto; padding: .6rem 1rem; display: flex; align-items: center; gap: 1rem; flex-wrap: wrap; }
.brand { font-weight: 700; color: var(--text); display: flex; align-items: center; gap: .5rem; white-space: nowrap; }
.brand-mark { width: 26px; height: 26px; border-radius: 7px; background: linear-gradient(135deg, var(--accent), #7b5cff); display: inline-grid; place-items: center; color: #fff; font-size: .8rem; }
.nav { display: flex; gap: .25rem; overflow-x: auto; flex: 1; scrollbar-width: none; }
.nav a { padding: .4rem .7rem; border-radius: 8px; color: var(--muted); white-space: nowrap; font-weight: 500; display: inline-flex; align-items: center; min-height: 2.75rem; }
.nav a:hover { background: var(--soft); text-decoration: none; color: var(--text); }
.nav a[aria-current="page"] { background: var(--soft); color: var(--text); }
/* On a phone the navigation is one row: Queue and Messages with their counts, the rest under "More". */
.narrow-only { display: none; }
@media (max-width: 700px) {
  .wide-only { display: none !important; }
  /* The queue on a phone: the nav already says where you are; the search and the sheet come first. */
  .queue-head h1 { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  .queue-head { margin-bottom: .5rem; }
  .queue-head:not(:has(.badge)) { margin: 0; }
  .narrow-only { display: block; }
  .topbar-inner { gap: .25rem; padding: .25rem .75rem; flex-wrap: nowrap; }
  .brand-name { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  .nav { overflow: visible; justify-content: flex-end; gap: .1rem; }
  .nav a { padding: .4rem .6rem; }
  main { padding-top: .75rem; }
}
.brand { min-height: 2.75rem; min-width: 2.75rem; }
.more { position: relative; }
.more > summary { list-style: none; padding: 0 .7rem; min-height: 2.75rem; display: inline-flex; align-items: center; color: var(--muted); border-radius: 8px; font-weight: 500; }
.more > summary::-webkit-details-marker { display: none; }
.more > summary::after { content: " ▾"; white-space: pre; }
.more[open] > summary { background: var(--soft); color: var(--text); }
.more-menu { position: absolute; right: 0; top: 100%; z-index: 6; min-width: 12rem; background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: 0 8px 24px rgba(16, 24, 40, .16); padding: .35rem; display: grid; gap: .1rem; }
.more-menu a { display: flex; }
.more-menu form { padding: .25rem .35rem; }
.more-menu .btn { width: 100%; }
.vh { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.nav .count { display: inline-block; min-width: 1.4em; padding: 0 .35em; margin-left: .3em; border-radius: 99px; background: var(--accent); color: var(--accent-text); font-size: .75rem; text-align: center; }
main { max-width: 1120px; margin: 0 auto; padding: 1.25rem 1rem 3rem; overflow-wrap: anywhere; }
.page-head { display: flex; align-items: center; justify-content: space-between; gap: 1rem; flex-wrap: wrap; margin-bottom: 1rem; }
.sub { color: var(--muted); font-size: .9rem; }
.card { background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1rem 1.1rem; margin-bottom: 1rem; }
.grid-2 { display: grid; grid-template-columns: minmax(0, 1.6fr) minmax(0, 1fr); gap: 1rem; align-items: start; }
@media (max-width: 860px) { .grid-2 { grid-template-columns: 1fr; } }
.tabs { display: flex; gap: .4rem; flex-wrap: wrap; margin-bottom: 1rem; }
.tabs a { padding: .35rem .75rem; border: 1px solid var(--border); border-radius: 99px; background: var(--surface); color: var(--muted); font-size: .9rem; }
.tabs a:hover { text-decoration: none; color: var(--text); }
.tabs a[aria-current="page"] { background: var(--text); border-color: var(--text); color: var(--bg); }
.tabs .n, .tabs .count { margin-left: .25rem; font-variant-numeric: tabular-nums; }
.pill { display: inline-flex; align-items: center; gap: .3rem; padding: .1rem .55rem; border-radius: 99px; font-size: .78rem; font-weight: 600; white-space: nowrap; }
.pill::before { content: ""; width: .45rem; height: .45rem; border-radius: 50%; background: currentColor; }
.st-submitted { color: var(--submitted); background: var(--submitted-bg); }
.st-accepted { color: var(--accepted); background: var(--accepted-bg); }
.st-delivered { color: var(--delivered); background: var(--delivered-bg); }
.st-rejected { color: var(--rejected); background: var(--rejected-bg); }
.st-under_review, .st-in_progress { color: var(--retired); background: var(--retired-bg); }
.badge { display: inline-block; max-width: 100%; padding: .05rem .5rem; border-radius: 6px; font-size: .75rem; font-weight: 600; border: 1px solid var(--border); color: var(--muted); }
.badge.warn { color: var(--warn); background: var(--warn-bg); border-color: transparent; }
.badge.danger { color: var(--rejected); background: var(--rejected-bg); border-color: transparent; }
.badge.new { color: var(--accent-text); background: var(--accent); border-color: transparent; }
.badge.test { color: var(--warn); border-color: var(--warn); }
.test-filter { margin-top: -4px; font-size: 0.9em; }
.queue { list-style: none; margin: 0 0 1rem; padding: 0; display: grid; gap: .5rem; }
/* A card: the link (title, why, place, time left) and, where there is one, a row of quick actions. */
.queue > li { background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); padding: .3rem .75rem; display: grid; grid-template-columns: minmax(0, 1fr); align-items: center; gap: 0 1rem; }
@media (min-width: 701px) { .queue > li { grid-template-columns: minmax(0, 1fr) auto; } }
.queue > li:hover { border-color: var(--accent); }
.queue > li:has(a.item.overdue) { border-left: 4px solid var(--danger); }
.queue a.item { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 0 .75rem; padding: .2rem 0; min-height: 2.75rem; color: var(--text); }
.queue a.item:hover { text-decoration: none; }
.queue a.item:hover .item-title { text-decoration: underline; }
.item-title { font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.item-line { grid-column: 1 / -1; display: flex; gap: .2rem .6rem; align-items: center; flex-wrap: nowrap; overflow: hidden; white-space: nowrap; color: var(--muted); font-size: .85rem; }
.item-line > * { flex: none; }
.item-line > span:last-child { flex: 0 1 auto; overflow: hidden; text-overflow: ellipsis; }
.item-when { grid-column: 2; grid-row: 1; font-size: .85rem; white-space: nowrap; text-align: right; }
.quick { display: flex; gap: .35rem; align-items: center; flex-wrap: nowrap; }
.quick form { display: contents; }
.quick-label { color: var(--muted); font-size: .82rem; margin-right: .15rem; }
.quick .chip { display: inline-flex; align-items: center; justify-content: center; min-width: 2.75rem; font-weight: 600; }
a.chip { color: var(--text); text-decoration: none; }
.toolbar { margin-bottom: .6rem; }
.toolbar > summary { display: flex; align-items: center; gap: .4rem; min-height: 2.75rem; padding: 0 .8rem; border: 1px solid var(--border); border-radius: 99px; background: var(--surface); font-weight: 600; width: fit-content; max-width: 100%; }
.toolbar > summary::after { content: "▾"; color: var(--muted); }
.toolbar[open] > summary::after { content: "▴"; }
.toolbar .sheet { padding: .6rem 0 .2rem; display: grid; gap: .2rem; }
.toolbar .sheet .tabs { margin-bottom: .4rem; }
.overdue-text { color: var(--danger); font-weight: 600; }
.empty { text-align: center; color: var(--muted); padding: 2.5rem 1rem; }
.pager { display: flex; justify-content: flex-end; margin-top: 1rem; }
dl.kv { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .45rem 1rem; margin: 0; }
dl.kv dt { color: var(--muted); font-size: .88rem; }
dl.kv dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 520px) { dl.kv { grid-template-columns: 1fr; gap: .1rem; } dl.kv dd { margin-bottom: .5rem; } }
.prose { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font: inherit; }
.quote { background: var(--soft); border-radius: 8px; padding: .75rem .9rem; }
.card > .quote:not(:last-child) { margin-bottom: .75rem; }
.mono, code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; overflow-wrap: anywhere; }
.idline { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; color: var(--muted); }
.idline a { display: inline-flex; align-items: center; min-height: 2.75rem; }
.timeline { list-style: none; margin: 0; padding: 0; }
.timeline li { position: relative; padding: 0 0 .7rem 1.2rem; border-left: 2px solid var(--border); margin-left: .3rem; }
.timeline li:last-child { border-left-color: transparent; padding-bottom: 0; }
.timeline li::before { content: ""; position: absolute; left: -6px; top: .35rem; width: 10px; height: 10px; border-radius: 50%; background: var(--surface); border: 2px solid var(--accent); }
form { margin: 0; }
label { display: block; font-weight: 600; font-size: .9rem; margin-bottom: .3rem; }
.hint { color: var(--muted); font-size: .82rem; font-weight: 400; }
input:not([type]), input[type=text], input[type=password], input[type=datetime-local], input[type=email], select, textarea {
  width: 100%; padding: .55rem .7rem; border: 1px solid var(--border); border-radius: 8px; background: var(--surface); color: var(--text); font: inherit; min-height: 2.75rem; }
textarea { min-height: 9rem; resize: vertical; line-height: 1.45; }
input:focus, select:focus, textarea:focus { outline: 2px solid var(--focus); outline-offset: 0; border-color: var(--focus); }
.field { margin-bottom: .85rem; }
.row { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
.row.end { justify-content: flex-end; }
.btn { display: inline-flex; align-items: center; justify-content: center; gap: .4rem; padding: .55rem 1rem; border-radius: 8px; border: 1px solid transparent; font: inherit; font-weight: 600; cursor: pointer; background: var(--accent); color: var(--accent-text); min-height: 2.75rem; }
.btn:hover { filter: brightness(1.07); text-decoration: none; }
.btn.secondary { background: var(--surface); color: var(--text); border-color: var(--border); }
.btn.danger { background: var(--danger); color: #fff; }
.btn.ghost { background: transparent; color: var(--muted); border-color: var(--border); }
.btn.small { padding: .25rem .6rem; min-height: 2.75rem; font-size: .85rem; }
.chip { padding: .2rem .8rem; min-height: 2.75rem; border-radius: 99px; border: 1px solid var(--border); background: var(--soft); color: var(--text); font: inherit; font-size: .82rem; cursor: pointer; }
.chip:hover { border-color: var(--accent); }
.hash { display: block; margin-top: .35rem; padding: .45rem .6rem; background: var(--soft); border-radius: 8px; }
.flash { border-radius: var(--radius); padding: .7rem 1rem; margin-bottom: 1rem; border: 1px solid transparent; }
.flash.ok { background: var(--delivered-bg); color: var(--delivered); }
.flash.error { background: var(--rejected-bg); color: var(--rejected); }
.flash ul { margin: .3rem 0 0; padding-left: 1.2rem; }
.action + .action { border-top: 1px solid var(--border); padding-top: 1rem; margin-top: 1rem; }
table { width: 100%; border-collapse: collapse; font-size: .9rem; }
th, td { text-align: left; padding: .55rem .5rem; border-bottom: 1px solid var(--border); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; }
.table-wrap { overflow-x: auto; }
@media (max-width: 700px) {
  table.stack thead { display: none; }
  table.stack tr { display: block; border-bottom: 1px solid var(--border); padding: .5rem 0; }
  table.stack td { display: flex; gap: .75rem; border: 0; padding: .2rem 0; }
  table.stack td::before { content: attr(data-label); color: var(--muted); min-width: 6.5rem; font-size: .8rem; }
}
.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: .75rem; margin-bottom: 1rem; }
.stat { background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); padding: .9rem 1rem; box-shadow: var(--shadow); }
.stat .label { color: var(--muted); font-size: .82rem; }
.stat .value { font-size: 1.6rem; font-weight: 700; font-variant-numeric: tabular-nums; }
meter { width: 100%; height: .7rem; }
.login { max-width: 400px; margin: 10vh auto 0; }
.messages { list-style: none; padding: 0; margin: 0; display: grid; gap: .6rem; }
.message-head { display: flex; justify-content: space-between; gap: .5rem; flex-wrap: wrap; margin-bottom: .4rem; }
.noscript-only { }
.js .noscript-only { display: none; }
/* Talking with the operator: replies under a message, the reply form, the task's key facts. */
.replies { list-style: none; margin: .6rem 0 0; padding: 0 0 0 .8rem; border-left: 3px solid var(--accent); display: grid; gap: .5rem; }
.reply { margin-top: .6rem; }
.reply textarea { min-height: 4.5rem; }
.key-facts { margin-top: .75rem; }
fieldset { border: 0; margin: 0 0 .85rem; padding: 0; min-width: 0; }
legend { font-weight: 600; font-size: .9rem; margin-bottom: .3rem; padding: 0; }
.choice { display: flex; gap: .5rem; align-items: center; font-weight: 400; min-height: 2.75rem; }
.choice input { width: 1.2rem; height: 1.2rem; }
summary { cursor: pointer; font-weight: 600; padding: .75rem 0; }
.tabs a { display: inline-flex; align-items: center; min-height: 2.75rem; }
/* The live queue: a task that arrived while the page was open stands out until the next reload. */
.queue li.fresh { border-color: var(--accent); box-shadow: 0 0 0 3px var(--focus); }
.live-note { position: sticky; bottom: 1rem; margin: 1rem auto 0; max-width: 40rem; }
.files { list-style: none; padding: 0; margin: 0 0 .75rem; display: grid; gap: .6rem; }
.file { display: flex; gap: .6rem; align-items: flex-start; min-width: 0; }
.file img, .file-icon { width: 64px; height: 64px; border-radius: 8px; object-fit: cover; flex: none; border: 1px solid var(--border); background: var(--soft); display: inline-grid; place-items: center; font-size: 1.4rem; }
.file-meta { flex: 1; min-width: 0; overflow-wrap: anywhere; }
.file-hash { display: block; font-size: .75rem; color: var(--muted); }
.dropzone { border: 2px dashed var(--border); border-radius: var(--radius); padding: 1rem; text-align: center; }
.dropzone.over { border-color: var(--accent); background: var(--soft); }
.dropzone .file-input { display: block; margin: .5rem auto; max-width: 100%; }
.js .dropzone .file-input { position: absolute; width: 1px; height: 1px; opacity: 0; }
.uploads { list-style: none; padding: 0; margin: .5rem 0 0; text-align: left; }
.uploads li { font-size: .85rem; margin: .25rem 0; overflow-wrap: anywhere; }
.uploads progress { width: 100%; }
.uploads .failed { color: var(--danger); }
[hidden] { display: none !important; }
/* Structured answers (issue 24): the result form generated from a response schema, and the delivered result. */
input[type=number], input[type=date], input[type=time], input[type=url] {
  width: 100%; padding: .55rem .7rem; border: 1px solid var(--border); border-radius: 8px; background: var(--surface); color: var(--text); font: inherit; min-height: 2.75rem; }
.field.check { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.field.check input { width: 1.4rem; height: 1.4rem; }
.field.check label { margin: 0; min-height: 2.75rem; display: flex; align-items: center; }
.field.check .hint, .field.check .field-error { flex-basis: 100%; margin: 0; }
.result-group { border: 1px solid var(--border); border-radius: var(--radius); padding: .6rem .8rem; }
.result-group > legend { padding: 0 .3rem; }
.result-row { border-left: 3px solid var(--border); padding-left: .6rem; margin-bottom: .6rem; }
.field-error { color: var(--danger); font-size: .85rem; margin: .25rem 0 0; }
[aria-invalid=true] { border-color: var(--danger) !important; }
.default-check { position: absolute; left: -9999px; width: 1px; height: 1px; overflow: hidden; }
.result-table th { text-transform: none; letter-spacing: 0; width: 35%; overflow-wrap: anywhere; }
.result-table td { overflow-wrap: anywhere; }
.result-list { margin: 0; padding-left: 1.2rem; }
/* The messages inbox: grouped by task and sender; one reply box open at a time. */
.thread-head { display: flex; flex-wrap: wrap; gap: .3rem .5rem; align-items: center; }
.nobreak { white-space: nowrap; overflow-wrap: normal; }
.sender + .sender { border-top: 1px solid var(--border); padding-top: .75rem; margin-top: .75rem; }
.sender h3 { font-weight: 600; overflow-wrap: anywhere; }
.msg { padding: .5rem 0; }
.msg + .msg { border-top: 1px dashed var(--border); }
.msg.done > .prose { color: var(--muted); }
.msg-actions { margin-top: .4rem; }
.reply-box > summary { list-style: none; display: inline-flex; }
.reply-box > summary::-webkit-details-marker { display: none; }
.reply-box[open] { flex-basis: 100%; }
.reply-box[open] > summary { margin-bottom: .4rem; }
.badge.ok { color: var(--delivered); background: var(--delivered-bg); border-color: transparent; }
/* Technical details (hashes, the receipt): one tap away, out of the reading path. */
details.tech { margin-top: .5rem; }
details.tech > summary { font-weight: 500; color: var(--muted); min-height: 2.75rem; display: flex; align-items: center; padding: 0; }
/* The task page's next step, at the bottom of a phone's screen; final actions stay in the page. */
.action-bar { position: sticky; bottom: 0; z-index: 4; margin: 1rem -1rem -3rem; padding: .5rem 1rem calc(.5rem + env(safe-area-inset-bottom)); background: var(--surface); border-top: 1px solid var(--border); box-shadow: 0 -4px 16px rgba(16, 24, 40, .08); }
.action-bar.narrow-only { display: none; }
@media (max-width: 700px) { .action-bar.narrow-only { display: flex; gap: .5rem; } .action-bar form { display: contents; } .action-bar .btn { flex: 1 1 auto; white-space: nowrap; padding-inline: .7rem; } }
.danger-zone { border-color: var(--rejected-bg); }
/* Back links and links that stand alone are tap targets too (44 px). */
a.back { display: inline-flex; align-items: center; min-height: 2.75rem; padding: 0 .25rem; margin-left: -.25rem; font-weight: 600; }
.file-meta > a { display: inline-flex; align-items: center; min-height: 2.75rem; }
footer.foot a { display: inline-flex; align-items: center; min-height: 2.75rem; }
footer.foot { max-width: 1120px; margin: 0 auto; padding: 0 1rem 2rem; color: var(--muted); font-size: .8rem; }
`;

export const CONSOLE_JS = String.raw`
(function () {
  'use strict';
  document.documentElement.classList.add('js');
  var pad = function (n) { return String(n).padStart(2, '0'); };
  var localValue = function (d) {
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + 'T' + pad(d.getHours()) + ':' + pad(d.getMinutes());
  };

  // The live console: an event stream from /operator/events updates the title (unseen tasks + new
  // messages) and the queue without a reload; a task page says when its task changed meanwhile.
  var body = document.body;
  if (window.EventSource && window.fetch && window.DOMParser && body.hasAttribute('data-live')) {
    var baseTitle = body.getAttribute('data-title') || document.title;
    var unseen = Number(body.getAttribute('data-unseen') || 0);
    // Messages waiting when the page was made, plus those that arrived since (docs/inbox.md).
    var waiting = Number(body.getAttribute('data-waiting') || 0);
    var newMessages = {}, messageCount = 0;
    var setTitle = function () {
      var n = unseen + waiting + messageCount;
      document.title = (n > 0 ? '(' + n + ') ' : '') + baseTitle;
    };
    var refreshing = false, again = false;
    var refreshQueue = function () {
      var list = document.querySelector('[data-live-list]');
      if (!list) return;
      if (refreshing) { again = true; return; }
      refreshing = true;
      var before = {};
      list.querySelectorAll('li[data-task-id]').forEach(function (li) { before[li.getAttribute('data-task-id')] = true; });
      fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (text) {
          if (!text) return;
          var doc = new DOMParser().parseFromString(text, 'text/html');
          var fresh = doc.querySelector('[data-live-list]');
          var current = document.querySelector('[data-live-list]');
          if (!fresh || !current) return;
          fresh.querySelectorAll('li[data-task-id]').forEach(function (li) {
            if (!before[li.getAttribute('data-task-id')]) li.classList.add('fresh');
          });
          // A sheet the operator opened stays open across the refresh; a toolbar being typed in
          // (focus or changed fields) stays as it is.
          var sheetOpen = current.querySelector('details.toolbar[open]');
          var bar = current.querySelector('form.queue-toolbar');
          var typing = bar && (bar.contains(document.activeElement) || Array.prototype.some.call(bar.querySelectorAll('input, select'), function (el) {
            if (el.type === 'hidden') return false;
            if (el.type === 'checkbox') return el.checked !== el.defaultChecked;
            if (el.tagName === 'SELECT') {
              // With no option marked selected, the first one is: that is not a change.
              var initial = Array.prototype.findIndex.call(el.options, function (o) { return o.defaultSelected; });
              return el.selectedIndex !== (initial < 0 ? 0 : initial);
            }
            return el.value !== el.defaultValue;
          }));
          var freshBar = fresh.querySelector('form.queue-toolbar');
          current.replaceWith(document.adoptNode(fresh));
          if (typing && freshBar) freshBar.replaceWith(bar);
          var sheet = fresh.querySelector('details.toolbar');
          if (sheetOpen && sheet) sheet.open = true;
          var freshNav = doc.querySelector('.nav'), myNav = document.querySelector('.nav');
          if (freshNav && myNav && !myNav.querySelector('details[open]')) myNav.replaceWith(document.adoptNode(freshNav));
          localTimes(fresh);
        })
        .catch(function () {})
        .then(function () { refreshing = false; if (again) { again = false; refreshQueue(); } });
    };
    var taskHere = document.querySelector('[data-task-id]:not(li)');
    // A task page updates the parts the operator is not typing in; a part with typed text stays,
    // and a note says the task changed.
    var touched = function (el) {
      var fields = el.querySelectorAll('textarea, input[type="text"], input[type="email"], input[type="datetime-local"]');
      for (var i = 0; i < fields.length; i++) if (fields[i].value !== fields[i].defaultValue) return true;
      return document.activeElement !== document.body && el.contains(document.activeElement);
    };
    var refreshTask = function () {
      fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (text) {
          if (!text) return;
          var doc = new DOMParser().parseFromString(text, 'text/html');
          var kept = false;
          doc.querySelectorAll('main .page-head, main section[aria-labelledby]').forEach(function (fresh) {
            var key = fresh.getAttribute('aria-labelledby');
            var current = key ? document.querySelector('main section[aria-labelledby="' + key + '"]') : document.querySelector('main .page-head');
            if (!current || current.innerHTML === fresh.innerHTML) return;
            if (touched(current)) { kept = true; return; }
            var adopted = document.adoptNode(fresh);
            current.replaceWith(adopted);
            localTimes(adopted);
          });
          if (kept) noteChanged();
        })
        .catch(function () { noteChanged(); });
    };
    var noteChanged = function () {
      if (document.querySelector('.live-note')) return;
      var note = document.createElement('div');
      note.className = 'flash ok live-note';
      note.setAttribute('role', 'status');
      note.innerHTML = '<strong>This task changed meanwhile.</strong> What you typed is kept; <a href="">reload</a> to see everything.';
      document.querySelector('main').appendChild(note);
    };
    var source = new EventSource('/operator/events');
    source.addEventListener('hello', function (e) { unseen = JSON.parse(e.data).unseen_tasks; setTitle(); });
    source.addEventListener('change', function (e) {
      var d = JSON.parse(e.data);
      unseen = d.unseen_tasks;
      // A message naming several tasks arrives once per task: count it once.
      if (d.kind === 'message' && !newMessages[d.message_id]) { newMessages[d.message_id] = true; messageCount += 1; }
      setTitle();
      refreshQueue();
      if (taskHere && d.task_id === taskHere.getAttribute('data-task-id')) refreshTask();
    });
    source.addEventListener('resync', function () { refreshQueue(); });
  }

  // Web Push: subscribe this browser (service worker + PushManager) and hand the subscription to
  // the console; the service then pushes every new task and message here.
  var pushButton = document.querySelector('[data-push-key]');
  var pushStatus = document.querySelector('[data-push-status]');
  if (pushButton && 'serviceWorker' in navigator && 'PushManager' in window && window.Notification) {
    var say = function (text) { if (pushStatus) pushStatus.textContent = text; };
    var keyBytes = function (b64) {
      var s = atob(b64.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((b64.length + 3) % 4));
      return Uint8Array.from(s, function (c) { return c.charCodeAt(0); });
    };
    var csrfInput = document.querySelector('input[name="_csrf"]');
    pushButton.hidden = false;
    say(Notification.permission === 'granted' ? 'Notifications are allowed; press to make sure this device is subscribed.' : '');
    pushButton.addEventListener('click', function () {
      Notification.requestPermission()
        .then(function (permission) {
          if (permission !== 'granted') throw new Error('Notifications were not allowed in this browser.');
          return navigator.serviceWorker.register('/operator/sw.js', { scope: '/operator' });
        })
        .then(function () { return navigator.serviceWorker.ready; })
        .then(function (registration) {
          return registration.pushManager.getSubscription().then(function (existing) {
            return existing || registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(pushButton.getAttribute('data-push-key')) });
          });
        })
        .then(function (subscription) {
          var json = subscription.toJSON();
          return fetch('/operator/push/subscriptions', {
            method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ endpoint: json.endpoint, keys: json.keys, _csrf: csrfInput ? csrfInput.value : '' })
          });
        })
        .then(function (response) {
          if (response.ok) return say('Notifications are on for this device.');
          return response.json().then(
            function (body) { say('The console refused the subscription: ' + body.message); },
            function () { say('The console refused the subscription (' + response.status + ').'); }
          );
        })
        .catch(function (error) { say(error && error.message ? error.message : 'Could not enable notifications.'); });
    });
  }

  // Times: the server writes UTC; show the operator's local time, with UTC in the tooltip.
  function localTimes(root) {
    root.querySelectorAll('time[data-local]').forEach(function (el) {
      var d = new Date(el.getAttribute('datetime'));
      if (isNaN(d.getTime())) return;
      el.title = el.textContent;
      el.textContent = el.getAttribute('data-local') === 'short'
        ? d.toLocaleString(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' })
        : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
    });
  }
  localTimes(document);

  // ETA pickers: the server renders UTC; show and edit local time, send the offset along.
  document.querySelectorAll('input[data-eta]').forEach(function (input) {
    var form = input.form;
    var offset = form.querySelector('input[name="eta_offset"]');
    var tz = form.querySelector('[data-tz]');
    if (input.value) {
      var utc = new Date(input.value + ':00Z');
      if (!isNaN(utc)) input.value = localValue(utc);
    }
    if (tz) {
      try { tz.textContent = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time'; } catch (e) { tz.textContent = 'local time'; }
    }
    form.querySelectorAll('[data-eta-hours]').forEach(function (chip) {
      chip.hidden = false;
      chip.addEventListener('click', function () {
        input.value = localValue(new Date(Date.now() + Number(chip.getAttribute('data-eta-hours')) * 3600000));
        input.dispatchEvent(new Event('change'));
      });
    });
    form.addEventListener('submit', function () {
      var chosen = new Date(input.value);
      if (offset && !isNaN(chosen)) offset.value = String(chosen.getTimezoneOffset());
    });
  });

  // Live SHA-256 of the deliverable: exactly what the receipt will sign (UTF-8 bytes, LF line ends).
  document.querySelectorAll('textarea[data-sha256]').forEach(function (area) {
    var out = document.getElementById(area.getAttribute('data-sha256'));
    if (!out) return;
    if (!(window.crypto && crypto.subtle)) { out.textContent = 'shown once delivered (live hashing needs HTTPS or localhost)'; return; }
    var seq = 0;
    var update = function () {
      var mine = ++seq;
      crypto.subtle.digest('SHA-256', new TextEncoder().encode(area.value)).then(function (buf) {
        if (mine !== seq) return;
        out.textContent = Array.from(new Uint8Array(buf)).map(function (b) { return b.toString(16).padStart(2, '0'); }).join('');
      });
    };
    area.addEventListener('input', update);
    update();
  });

  // Canned texts (rejection reasons).
  document.querySelectorAll('[data-fill]').forEach(function (chip) {
    chip.hidden = false;
    chip.addEventListener('click', function () {
      var target = document.getElementById(chip.getAttribute('data-fill'));
      if (target) { target.value = chip.getAttribute('data-text') || ''; target.focus(); }
    });
  });

  // Final actions ask once.
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      var submitter = event.submitter;
      if (submitter && submitter.hasAttribute('data-no-confirm')) return;
      if (!window.confirm(form.getAttribute('data-confirm'))) { event.preventDefault(); return; }
      // Confirmed here: the server's own confirmation step (for browsers without script) is skipped.
      var confirmed = form.querySelector('[data-confirmed]');
      if (confirmed) confirmed.value = '1';
    });
  });

  // Evidence files: upload each chosen or dropped file as the raw body, one at a time, with
  // progress; the page reloads when all are done to show them with their hashes.
  document.querySelectorAll('[data-upload]').forEach(function (zone) {
    var input = zone.querySelector('input[type="file"]');
    var list = zone.querySelector('.uploads');
    var url = zone.getAttribute('data-upload');
    var csrf = zone.getAttribute('data-csrf');
    var maxBytes = Number(zone.getAttribute('data-max-bytes'));
    var sendOne = function (file) {
      return new Promise(function (resolve) {
        var row = document.createElement('li');
        var label = document.createElement('span');
        label.textContent = file.name + ' ';
        var bar = document.createElement('progress');
        bar.max = 100; bar.value = 0;
        row.appendChild(label); row.appendChild(bar); list.appendChild(row);
        var fail = function (text) { row.className = 'failed'; label.textContent = file.name + ': ' + text; bar.remove(); resolve(false); };
        if (maxBytes && file.size > maxBytes) { fail('too large'); return; }
        var xhr = new XMLHttpRequest();
        xhr.open('POST', url);
        xhr.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
        xhr.setRequestHeader('Content-Disposition', "attachment; filename*=UTF-8''" + encodeURIComponent(file.name));
        xhr.setRequestHeader('X-CSRF-Token', csrf);
        xhr.upload.onprogress = function (e) { if (e.lengthComputable) bar.value = Math.round(e.loaded / e.total * 100); };
        xhr.onload = function () {
          if (xhr.status === 201) { bar.value = 100; label.textContent = file.name + ' ✓ '; resolve(true); return; }
          var message = 'failed (' + xhr.status + ')';
          try { message = JSON.parse(xhr.responseText).message || message; } catch (e) { /* not JSON */ }
          fail(message);
        };
        xhr.onerror = function () { fail('the connection failed'); };
        xhr.send(file);
      });
    };
    var sendAll = function (files) {
      var chain = Promise.resolve(true);
      var ok = true;
      Array.prototype.forEach.call(files, function (file) {
        chain = chain.then(function () { return sendOne(file).then(function (done) { ok = ok && done; }); });
      });
      chain.then(function () { if (ok && files.length > 0) window.location.reload(); });
    };
    input.addEventListener('change', function () { sendAll(input.files); });
    zone.addEventListener('dragover', function (e) { e.preventDefault(); zone.classList.add('over'); });
    zone.addEventListener('dragleave', function () { zone.classList.remove('over'); });
    zone.addEventListener('drop', function (e) {
      e.preventDefault();
      zone.classList.remove('over');
      if (e.dataTransfer && e.dataTransfer.files) sendAll(e.dataTransfer.files);
    });
  });

  // The phone's "More" menu closes on a tap elsewhere or Escape, as menus do.
  var closeMenus = function (except) {
    document.querySelectorAll('details.more[open]').forEach(function (menu) { if (menu !== except) menu.open = false; });
  };
  document.addEventListener('click', function (event) { closeMenus(event.target.closest ? event.target.closest('details.more') : null); });
  document.addEventListener('keydown', function (event) { if (event.key === 'Escape') closeMenus(null); });

  // Reply boxes: one open at a time (browsers without exclusive <details name> get it here), and
  // the opened one takes the typing focus.
  document.querySelectorAll('details.reply-box').forEach(function (box) {
    box.addEventListener('toggle', function () {
      if (!box.open) return;
      document.querySelectorAll('details.reply-box[open]').forEach(function (other) { if (other !== box) other.open = false; });
      var area = box.querySelector('textarea');
      if (area) area.focus();
    });
  });
  var openReply = document.querySelector('details.reply-box[open] textarea');
  if (openReply) openReply.focus();

  // Copy buttons.
  document.querySelectorAll('[data-copy]').forEach(function (button) {
    if (!(navigator.clipboard && window.isSecureContext)) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var source = document.getElementById(button.getAttribute('data-copy'));
      if (!source) return;
      navigator.clipboard.writeText(source.textContent || '').then(function () {
        var label = button.textContent;
        button.textContent = 'Copied';
        setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
  });
})();
`;
