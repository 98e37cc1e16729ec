(function () {
  'use strict';
  var rtf = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }) : null;
  function relative(ms) {
    if (!rtf) return '';
    var s = (ms - Date.now()) / 1000,
      a = Math.abs(s);
    if (a < 60) return rtf.format(0, 'second');
    if (a < 3600) return rtf.format(Math.round(s / 60), 'minute');
    if (a < 86400) return rtf.format(Math.round(s / 3600), 'hour');
    return rtf.format(Math.round(s / 86400), 'day');
  }
  function zone() {
    try {
      return Intl.DateTimeFormat().resolvedOptions().timeZone || 'your time zone';
    } catch {
      return 'your time zone';
    }
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
  // Receipts a non-expert can check: verify the JWS with WebCrypto Ed25519 against the published
  // keys, hash the result as the status endpoint returns it, and say so in plain words. A browser
  // without Ed25519 asks the service to run the same check (/tasks/receipt-check).
  var check = document.querySelector('[data-receipt-check]');
  if (check && window.fetch && window.crypto && crypto.subtle && window.TextEncoder) {
    var out = check.querySelector('[data-receipt-result]');
    var taskId = check.getAttribute('data-task-id');
    var iss = check.getAttribute('data-iss');
    var bytes = function (b64) {
      var t = b64.replace(/-/g, '+').replace(/_/g, '/');
      while (t.length % 4) t += '=';
      return Uint8Array.from(atob(t), function (c) {
        return c.charCodeAt(0);
      });
    };
    var hex = function (buf) {
      return Array.from(new Uint8Array(buf))
        .map(function (b) {
          return b.toString(16).padStart(2, '0');
        })
        .join('');
    };
    var say = function (ok, signedAt, where, why) {
      var when = signedAt ? new Date(signedAt).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : 'an unknown date';
      check.classList.remove('verified', 'failed');
      check.classList.add(ok ? 'ok' : 'bad');
      var lead = document.createElement('strong');
      lead.textContent = ok ? 'Verified.' : 'Not verified.';
      out.textContent = ok
        ? ' Signed by this service on ' + when + '; the result above is exactly what was signed. (Checked ' + where + ' against the published keys.)'
        : ' This receipt does not check out: ' + (why || 'the signature or the result does not match') + '. Do not rely on this result.';
      out.insertBefore(lead, out.firstChild);
    };
    // The receipt's place in the public log (docs/receipt-log.md), checked here too: the proof's
    // checkpoint signed by the log's key (/log/vkey) and the RFC 9162 path from the receipt to its
    // root. Said only once both hold; a receipt not logged yet says nothing.
    var sha = function (parts) {
      var total = parts.reduce(function (n, p) {
        return n + p.length;
      }, 0);
      var all = new Uint8Array(total),
        at = 0;
      parts.forEach(function (p) {
        all.set(p, at);
        at += p.length;
      });
      return crypto.subtle.digest('SHA-256', all).then(function (d) {
        return new Uint8Array(d);
      });
    };
    var same = function (a, b) {
      return (
        a.length === b.length &&
        a.every(function (v, i) {
          return v === b[i];
        })
      );
    };
    var logged = function (receipt) {
      return Promise.all([
        fetch('/api/v1/tasks/' + encodeURIComponent(taskId) + '/receipt-proof').then(function (r) {
          return r.ok ? r.text() : null;
        }),
        fetch('/log/vkey').then(function (r) {
          return r.text();
        }),
      ]).then(function (got) {
        if (!got[0]) return;
        var lines = got[0].split('\n');
        var at = lines[1] && lines[1].indexOf('extra ') === 0 ? 2 : 1;
        var index = Number((lines[at] || '').replace('index ', ''));
        var path = [];
        for (at += 1; at < lines.length && lines[at] !== ''; at++) path.push(bytes(lines[at]));
        var note = lines.slice(at + 1).join('\n');
        var body = note.slice(0, note.indexOf('\n\n') + 1);
        var head = body.split('\n');
        var size = Number(head[1]),
          root = bytes(head[2] || '');
        var vkey = got[1].trim().split('+');
        var keyBytes = bytes(vkey.slice(2).join('+')).slice(1);
        var sigLine = note
          .slice(note.indexOf('\n\n') + 2)
          .split('\n')
          .filter(function (l) {
            return l.indexOf('\u2014 ' + vkey[0] + ' ') === 0;
          })[0];
        if (!sigLine || !(index < size)) return;
        var sig = bytes(sigLine.split(' ')[2]).slice(4);
        var enc = new TextEncoder();
        return crypto.subtle
          .importKey('raw', keyBytes, { name: 'Ed25519' }, false, ['verify'])
          .then(function (key) {
            return crypto.subtle.verify({ name: 'Ed25519' }, key, sig, enc.encode(body));
          })
          .then(function (signed) {
            if (!signed) return;
            return sha([new Uint8Array([0]), enc.encode(receipt)]).then(function (leaf) {
              var fn = index,
                sn = size - 1,
                step = Promise.resolve(leaf);
              path.forEach(function (p) {
                step = step.then(function (r) {
                  if (sn === 0) throw unsupported;
                  var next;
                  if (fn % 2 === 1 || fn === sn) {
                    next = sha([new Uint8Array([1]), p, r]);
                    while (fn % 2 === 0 && fn !== 0) {
                      fn = Math.floor(fn / 2);
                      sn = Math.floor(sn / 2);
                    }
                  } else next = sha([new Uint8Array([1]), r, p]);
                  fn = Math.floor(fn / 2);
                  sn = Math.floor(sn / 2);
                  return next;
                });
              });
              return step.then(function (r) {
                if (sn !== 0 || !same(r, root)) return;
                var note = document.createElement('span');
                note.setAttribute('data-log-position', String(index));
                note.textContent = ' Logged at position ' + index + ' of the public log.';
                out.appendChild(note);
              });
            });
          })
          .catch(function () {});
      });
    };
    var unsupported = {};
    Promise.all([
      fetch('/api/v1/tasks/' + encodeURIComponent(taskId), { headers: { Accept: 'application/json' } }).then(function (r) {
        return r.json();
      }),
      fetch('/.well-known/jwks.json').then(function (r) {
        return r.json();
      }),
    ])
      .then(function (got) {
        var task = got[0],
          jwks = got[1];
        var parts = String(task.receipt || '').split('.');
        if (parts.length !== 3) return say(false, null, '', 'it is not a compact JWS');
        var dec = new TextDecoder();
        var header = JSON.parse(dec.decode(bytes(parts[0])));
        var payload = JSON.parse(dec.decode(bytes(parts[1])));
        var jwk = (jwks.keys || []).filter(function (k) {
          return k.kid === header.kid;
        })[0];
        if (!jwk || header.alg !== 'EdDSA') return say(false, null, '', 'its key is not published');
        return crypto.subtle
          .importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: 'Ed25519' }, false, ['verify'])
          .catch(function () {
            throw unsupported;
          })
          .then(function (key) {
            return crypto.subtle.verify({ name: 'Ed25519' }, key, bytes(parts[2]), new TextEncoder().encode(parts[0] + '.' + parts[1]));
          })
          .then(function (signed) {
            return crypto.subtle.digest('SHA-256', new TextEncoder().encode(task.operator_notes || '')).then(function (digest) {
              if (!signed) return say(false, null, '', 'the signature is invalid');
              if (payload.task_id !== taskId || payload.sub !== taskId) return say(false, null, '', 'it was issued for another task');
              if (payload.iss !== iss) return say(false, null, '', 'it was issued by another service');
              if (hex(digest) !== payload.deliverable_sha256) return say(false, null, '', 'the result shown differs from the one signed');
              say(true, payload.iat * 1000, 'in your browser', '');
              return logged(task.receipt);
            });
          });
      })
      .catch(function (error) {
        if (error !== unsupported) {
          out.textContent = 'The receipt could not be checked right now; try reloading, or follow the steps under Technical details.';
          return;
        }
        return fetch('/tasks/receipt-check?id=' + encodeURIComponent(taskId), { headers: { Accept: 'application/json' } })
          .then(function (r) {
            return r.json();
          })
          .then(function (v) {
            say(Boolean(v.valid), v.signed_at, 'by the service (this browser cannot verify Ed25519 itself)', 'the service’s own check failed');
          });
      });
  }

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

  // The submission form's own rules, checked before sending (the server checks them again): a
  // place when someone must be there, and a description of at least a few words. The problem is
  // shown beside its field the way the server shows it, and the field gets the focus.
  var form = document.querySelector('form[action="/tasks"]');
  var present = document.getElementById('f-location_required');
  var where = document.getElementById('f-location_detail');
  var description = document.getElementById('f-description');
  if (form && present && where && description) {
    var minWords = Number(description.getAttribute('data-min-words')) || 3;
    var whereLabel = document.querySelector('label[for="f-location_detail"]');
    var showProblem = function (field, text) {
      var id = 'e-' + field.name;
      var box = document.getElementById(id);
      if (!text) {
        if (box && box.getAttribute('data-client')) box.remove();
        if (!box || box.getAttribute('data-client')) field.setAttribute('aria-invalid', 'false');
        return;
      }
      if (!box) {
        box = document.createElement('p');
        box.className = 'error';
        box.id = id;
        box.setAttribute('data-client', 'true');
        field.insertAdjacentElement('afterend', box);
      }
      box.textContent = text;
      field.setAttribute('aria-invalid', 'true');
      var described = (field.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
      if (described.indexOf(id) < 0) field.setAttribute('aria-describedby', described.concat(id).join(' '));
    };
    var syncWhere = function () {
      where.setAttribute('aria-required', present.checked ? 'true' : 'false');
      if (whereLabel) whereLabel.textContent = present.checked ? 'Where (required)' : 'Where';
      if (!present.checked) showProblem(where, '');
    };
    present.addEventListener('change', syncWhere);
    syncWhere();
    form.addEventListener('submit', function (event) {
      var problems = [];
      if (present.checked && where.value.trim() === '') {
        showProblem(where, 'Location is required when someone needs to be physically present: give a city, address or area');
        problems.push(where);
      } else showProblem(where, '');
      var words = description.value.split(/\s+/).filter(function (w) {
        return /[0-9A-Za-z\u00C0-\uFFFF]/.test(w);
      }).length;
      if (description.value.trim() !== '' && words < minWords) {
        showProblem(description, 'Description must have at least ' + minWords + ' words: say what to do and what a good result looks like');
        problems.push(description);
      } else if (description.value.trim() !== '') showProblem(description, '');
      if (problems.length > 0) {
        event.preventDefault();
        event.stopImmediatePropagation();
        problems[0].focus();
      }
    });
  }
})();
