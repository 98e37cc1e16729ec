// The console's script: progressive enhancement only; every form works without it.
(function () {
  'use strict';
  document.documentElement.classList.add('js');
  var pad = function (n) {
    return String(n).padStart(2, '0');
  };
  var localValue = function (d) {
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + 'T' + pad(d.getHours()) + ':' + pad(d.getMinutes());
  };

  // The service level (docs/coverage.md, For operators): the queue page holds only places for it,
  // filled from its page when they come into view (the "More" sheet when opened, the wide screen's
  // aside at load and with every live change), each with heading ids of its own.
  var fillServiceLevel = function (slot) {
    if (!window.fetch || !window.DOMParser || slot.hasAttribute('data-loading')) return;
    slot.setAttribute('data-loading', '');
    fetch('/operator/service-level', { credentials: 'same-origin', headers: { Accept: 'text/html' } })
      .then(function (r) {
        return r.ok ? r.text() : null;
      })
      .then(function (text) {
        var fresh = text && new DOMParser().parseFromString(text, 'text/html').querySelector('main .service-level');
        if (!fresh) return;
        var id = 'service-level-' + slot.getAttribute('data-service-level');
        var title = fresh.querySelector('h2');
        if (title) title.id = id + '-title';
        fresh.setAttribute('aria-labelledby', id + '-title');
        slot.replaceChildren(document.adoptNode(fresh));
      })
      .catch(function () {})
      .then(function () {
        slot.removeAttribute('data-loading');
      });
  };
  var fillVisibleServiceLevel = function () {
    document.querySelectorAll('[data-service-level]').forEach(function (slot) {
      if (slot.offsetParent !== null) fillServiceLevel(slot);
    });
  };
  document.addEventListener(
    'toggle',
    function (event) {
      var slot = event.target.open && event.target.querySelector && event.target.querySelector('[data-service-level]');
      if (slot) fillServiceLevel(slot);
    },
    true,
  );
  fillVisibleServiceLevel();

  // The live console: an event stream from /operator/events updates the title (unseen tasks + new
  // messages) and the queue without a reload; a task page says when its task changed meanwhile.
  var body = document.body;
  if (window.EventSource && window.fetch && window.DOMParser && body.hasAttribute('data-live')) {
    var baseTitle = body.getAttribute('data-title') || document.title;
    var unseen = Number(body.getAttribute('data-unseen') || 0);
    // Messages waiting when the page was made, plus those that arrived since (docs/inbox.md).
    var waiting = Number(body.getAttribute('data-waiting') || 0);
    var newMessages = {},
      messageCount = 0;
    var setTitle = function () {
      var n = unseen + waiting + messageCount;
      document.title = (n > 0 ? '(' + n + ') ' : '') + baseTitle;
    };
    var refreshing = false,
      again = false;
    var refreshQueue = function () {
      var list = document.querySelector('[data-live-list]');
      if (!list) return;
      if (refreshing) {
        again = true;
        return;
      }
      refreshing = true;
      var before = {};
      list.querySelectorAll('li[data-task-id]').forEach(function (li) {
        before[li.getAttribute('data-task-id')] = true;
      });
      fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } })
        .then(function (r) {
          return r.ok ? r.text() : null;
        })
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
          var typing =
            bar &&
            (bar.contains(document.activeElement) ||
              Array.prototype.some.call(bar.querySelectorAll('input, select'), function (el) {
                if (el.type === 'hidden') return false;
                if (el.type === 'checkbox') return el.checked !== el.defaultChecked;
                if (el.tagName === 'SELECT') {
                  // With no option marked selected, the first one is: that is not a change.
                  var initial = Array.prototype.findIndex.call(el.options, function (o) {
                    return o.defaultSelected;
                  });
                  return el.selectedIndex !== (initial < 0 ? 0 : initial);
                }
                return el.value !== el.defaultValue;
              }));
          var freshBar = fresh.querySelector('form.queue-toolbar');
          current.replaceWith(document.adoptNode(fresh));
          if (typing && freshBar) freshBar.replaceWith(bar);
          var sheet = fresh.querySelector('details.toolbar');
          if (sheetOpen && sheet) sheet.open = true;
          var freshNav = doc.querySelector('.nav'),
            myNav = document.querySelector('.nav');
          if (freshNav && myNav && !myNav.querySelector('details[open]')) myNav.replaceWith(document.adoptNode(freshNav));
          localTimes(fresh);
          fillVisibleServiceLevel();
        })
        .catch(function () {})
        .then(function () {
          refreshing = false;
          if (again) {
            again = false;
            refreshQueue();
          }
        });
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
        .then(function (r) {
          return r.ok ? r.text() : null;
        })
        .then(function (text) {
          if (!text) return;
          var doc = new DOMParser().parseFromString(text, 'text/html');
          var kept = false;
          doc.querySelectorAll('main .page-head, main section[aria-labelledby]').forEach(function (fresh) {
            var key = fresh.getAttribute('aria-labelledby');
            var current = key ? document.querySelector('main section[aria-labelledby="' + key + '"]') : document.querySelector('main .page-head');
            if (!current || current.innerHTML === fresh.innerHTML) return;
            if (touched(current)) {
              kept = true;
              return;
            }
            var adopted = document.adoptNode(fresh);
            current.replaceWith(adopted);
            localTimes(adopted);
          });
          if (kept) noteChanged();
        })
        .catch(function () {
          noteChanged();
        });
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
    source.addEventListener('hello', function (e) {
      unseen = JSON.parse(e.data).unseen_tasks;
      setTitle();
    });
    source.addEventListener('change', function (e) {
      var d = JSON.parse(e.data);
      unseen = d.unseen_tasks;
      // A message naming several tasks arrives once per task: count it once.
      if (d.kind === 'message' && !newMessages[d.message_id]) {
        newMessages[d.message_id] = true;
        messageCount += 1;
      }
      setTitle();
      refreshQueue();
      if (taskHere && d.task_id === taskHere.getAttribute('data-task-id')) refreshTask();
    });
    source.addEventListener('resync', function () {
      refreshQueue();
    });
  }

  // Web Push: subscribe this browser (service worker + PushManager) and hand the subscription to
  // the console; the service then pushes every new task and message here.
  var pushButton = document.querySelector('[data-push-key]');
  var pushStatus = document.querySelector('[data-push-status]');
  if (pushButton && 'serviceWorker' in navigator && 'PushManager' in window && window.Notification) {
    var say = function (text) {
      if (pushStatus) pushStatus.textContent = text;
    };
    var keyBytes = function (b64) {
      var s = atob(b64.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((b64.length + 3) % 4));
      return Uint8Array.from(s, function (c) {
        return c.charCodeAt(0);
      });
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
        .then(function () {
          return navigator.serviceWorker.ready;
        })
        .then(function (registration) {
          return registration.pushManager.getSubscription().then(function (existing) {
            return (
              existing ||
              registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(pushButton.getAttribute('data-push-key')) })
            );
          });
        })
        .then(function (subscription) {
          var json = subscription.toJSON();
          return fetch('/operator/push/subscriptions', {
            method: 'POST',
            credentials: 'same-origin',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ endpoint: json.endpoint, keys: json.keys, _csrf: csrfInput ? csrfInput.value : '' }),
          });
        })
        .then(function (response) {
          if (response.ok) return say('Notifications are on for this device.');
          return response.json().then(
            function (body) {
              say('The console refused the subscription: ' + body.message);
            },
            function () {
              say('The console refused the subscription (' + response.status + ').');
            },
          );
        })
        .catch(function (error) {
          say(error && error.message ? error.message : 'Could not enable notifications.');
        });
    });
  }

  // Times: the server writes UTC; show the operator's local time, with UTC in the tooltip.
  function localTimes(root) {
    root.querySelectorAll('time[data-local]').forEach(function (el) {
      var d = new Date(el.getAttribute('datetime'));
      if (isNaN(d.getTime())) return;
      el.title = el.textContent;
      el.textContent =
        el.getAttribute('data-local') === 'short'
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
      try {
        tz.textContent = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
      } catch {
        tz.textContent = 'local time';
      }
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
    if (!(window.crypto && crypto.subtle)) {
      out.textContent = 'shown once delivered (live hashing needs HTTPS or localhost)';
      return;
    }
    var seq = 0;
    var update = function () {
      var mine = ++seq;
      crypto.subtle.digest('SHA-256', new TextEncoder().encode(area.value)).then(function (buf) {
        if (mine !== seq) return;
        out.textContent = Array.from(new Uint8Array(buf))
          .map(function (b) {
            return b.toString(16).padStart(2, '0');
          })
          .join('');
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
      if (target) {
        target.value = chip.getAttribute('data-text') || '';
        target.focus();
      }
    });
  });

  // Final actions ask once.
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      var submitter = event.submitter;
      if (submitter && submitter.hasAttribute('data-no-confirm')) return;
      if (!window.confirm(form.getAttribute('data-confirm'))) {
        event.preventDefault();
        return;
      }
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
        bar.max = 100;
        bar.value = 0;
        row.appendChild(label);
        row.appendChild(bar);
        list.appendChild(row);
        var fail = function (text) {
          row.className = 'failed';
          label.textContent = file.name + ': ' + text;
          bar.remove();
          resolve(false);
        };
        if (maxBytes && file.size > maxBytes) {
          fail('too large');
          return;
        }
        var xhr = new XMLHttpRequest();
        xhr.open('POST', url);
        xhr.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
        xhr.setRequestHeader('Content-Disposition', "attachment; filename*=UTF-8''" + encodeURIComponent(file.name));
        xhr.setRequestHeader('X-CSRF-Token', csrf);
        xhr.upload.onprogress = function (e) {
          if (e.lengthComputable) bar.value = Math.round((e.loaded / e.total) * 100);
        };
        xhr.onload = function () {
          if (xhr.status === 201) {
            bar.value = 100;
            label.textContent = file.name + ' ✓ ';
            resolve(true);
            return;
          }
          var message = 'failed (' + xhr.status + ')';
          try {
            message = JSON.parse(xhr.responseText).message || message;
          } catch {
            /* not JSON */
          }
          fail(message);
        };
        xhr.onerror = function () {
          fail('the connection failed');
        };
        xhr.send(file);
      });
    };
    var sendAll = function (files) {
      var chain = Promise.resolve(true);
      var ok = true;
      Array.prototype.forEach.call(files, function (file) {
        chain = chain.then(function () {
          return sendOne(file).then(function (done) {
            ok = ok && done;
          });
        });
      });
      chain.then(function () {
        if (ok && files.length > 0) window.location.reload();
      });
    };
    input.addEventListener('change', function () {
      sendAll(input.files);
    });
    zone.addEventListener('dragover', function (e) {
      e.preventDefault();
      zone.classList.add('over');
    });
    zone.addEventListener('dragleave', function () {
      zone.classList.remove('over');
    });
    zone.addEventListener('drop', function (e) {
      e.preventDefault();
      zone.classList.remove('over');
      if (e.dataTransfer && e.dataTransfer.files) sendAll(e.dataTransfer.files);
    });
  });

  // The phone's "More" menu closes on a tap elsewhere or Escape, as menus do.
  var closeMenus = function (except) {
    document.querySelectorAll('details.more[open]').forEach(function (menu) {
      if (menu !== except) menu.open = false;
    });
  };
  document.addEventListener('click', function (event) {
    closeMenus(event.target.closest ? event.target.closest('details.more') : null);
  });
  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape') closeMenus(null);
  });

  // Reply boxes: one open at a time (browsers without exclusive <details name> get it here), and
  // the opened one takes the typing focus.
  document.querySelectorAll('details.reply-box').forEach(function (box) {
    box.addEventListener('toggle', function () {
      if (!box.open) return;
      document.querySelectorAll('details.reply-box[open]').forEach(function (other) {
        if (other !== box) other.open = false;
      });
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
        setTimeout(function () {
          button.textContent = label;
        }, 1500);
      });
    });
  });
})();
