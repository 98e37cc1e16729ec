// The task card (MCP Apps, spec 2026-01-26), inlined into ui://human-task/task-card.html by
// src/mcp/task-card.ts. A small bridge speaking the extension's postMessage JSON-RPC with the host
// (the package's App class bundles to about 660 KB; docs/mcp-apps.md): ui/initialize,
// ui/notifications/initialized, then the host's tool-input, tool-result and host-context-changed
// notifications; tools/call goes through the host to this service's MCP server.
(function () {
  'use strict';
  var PROTOCOL_VERSION = '2026-01-26';
  var MAX_WAIT_SECONDS = 50;
  var MAX_ANSWER = 5000;
  /** How long a request may go unanswered by the host: a tools/call that waits gets its wait on top. */
  var HOST_PATIENCE_MS = 15000;
  var STATUS_TEXT = {
    submitted: 'Waiting for review',
    under_review: 'Under review',
    in_progress: 'In progress',
    accepted: 'Accepted \u2014 being worked on',
    delivered: 'Delivered',
    rejected: 'Declined',
  };
  var FINAL = { delivered: true, rejected: true };
  var origin = document.querySelector('meta[name="service-origin"]').getAttribute('content');
  var $ = function (id) {
    return document.getElementById(id);
  };

  // ---- The bridge ----
  var nextId = 1;
  var pending = {};
  function post(message) {
    window.parent.postMessage(message, '*');
  }
  function request(method, params, patienceMs) {
    return new Promise(function (resolve, reject) {
      var id = nextId++;
      var timer = setTimeout(function () {
        delete pending[id];
        reject(new Error('no answer'));
      }, patienceMs || HOST_PATIENCE_MS);
      pending[id] = { resolve: resolve, reject: reject, timer: timer };
      post({ jsonrpc: '2.0', id: id, method: method, params: params });
    });
  }
  function notify(method, params) {
    post({ jsonrpc: '2.0', method: method, params: params || {} });
  }
  window.addEventListener('message', function (event) {
    if (event.source !== window.parent) return;
    var message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.method === undefined) {
      var waiting = pending[message.id];
      if (!waiting) return;
      delete pending[message.id];
      clearTimeout(waiting.timer);
      if (message.error) waiting.reject(new Error(message.error.message || 'refused'));
      else waiting.resolve(message.result);
      return;
    }
    if (message.id !== undefined) {
      // Requests from the host: ping and teardown are answered; anything else is unknown here.
      if (message.method === 'ui/resource-teardown') stopped = true;
      if (message.method === 'ping' || message.method === 'ui/resource-teardown') post({ jsonrpc: '2.0', id: message.id, result: {} });
      else post({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
      return;
    }
    var params = message.params || {};
    if (message.method === 'ui/notifications/host-context-changed') applyContext(params);
    else if (message.method === 'ui/notifications/tool-input') onToolInput(params.arguments || {});
    else if (message.method === 'ui/notifications/tool-result') onToolResult(params);
    else if (message.method === 'ui/notifications/tool-cancelled') say('The tool call was cancelled.');
  });

  /** Calls a tool of this service through the host; resolves with {ok, body}. */
  function callTool(name, args, patienceMs) {
    return request('tools/call', { name: name, arguments: args }, patienceMs).then(resultBody);
  }
  function resultBody(result) {
    var body = result && result.structuredContent;
    if (!body && result && result.content && result.content[0] && result.content[0].type === 'text') {
      try {
        body = JSON.parse(result.content[0].text);
      } catch (_) {
        body = null;
      }
    }
    return { ok: !(result && result.isError), body: body || {} };
  }

  // ---- Theme ----
  function applyContext(context) {
    var root = document.documentElement;
    if (context.theme === 'dark' || context.theme === 'light') root.setAttribute('data-theme', context.theme);
    var variables = context.styles && context.styles.variables;
    if (variables) {
      Object.keys(variables).forEach(function (name) {
        var value = variables[name];
        if (/^--[a-z0-9-]+$/.test(name) && typeof value === 'string') root.style.setProperty(name, value);
      });
    }
  }
  if (window.ResizeObserver) {
    new ResizeObserver(function () {
      notify('ui/notifications/size-changed', { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight });
    }).observe(document.body);
  }

  // ---- What the card shows ----
  var task = null;
  var taskId = null;
  var stopped = false;
  var following = false;

  function say(text) {
    var notice = $('notice');
    notice.textContent = text || '';
    notice.hidden = !text;
  }
  function when(iso) {
    var date = new Date(iso);
    if (isNaN(date.getTime())) return String(iso);
    return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  }
  function firstWords(text) {
    var words = String(text || '')
      .trim()
      .split(/\s+/);
    return words.length > 10 ? words.slice(0, 10).join(' ') + '\u2026' : words.join(' ');
  }
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }
  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }
  /** A structured result as a table; nested objects and lists as nested tables. */
  function table(value) {
    var t = el('table');
    var body = el('tbody');
    Object.keys(value).forEach(function (key) {
      var row = el('tr');
      var th = el('th', Array.isArray(value) ? String(Number(key) + 1) : key.replace(/_/g, ' '));
      th.scope = 'row';
      var td = el('td');
      var item = value[key];
      if (item !== null && typeof item === 'object') td.appendChild(table(item));
      else td.textContent = item === null ? '\u2014' : String(item);
      row.appendChild(th);
      row.appendChild(td);
      body.appendChild(row);
    });
    t.appendChild(body);
    return t;
  }

  function render(next) {
    task = next;
    taskId = next.task_id;
    $('title').textContent = firstWords(next.description) || 'Your task';
    $('status').textContent = STATUS_TEXT[next.status] || next.status;
    var facts = $('facts');
    clear(facts);
    var fact = function (name, value) {
      facts.appendChild(el('dt', name));
      facts.appendChild(el('dd', value));
    };
    if (next.eta && !FINAL[next.status]) fact('Expected by', when(next.eta));
    if (next.deadline) fact('Deadline', when(next.deadline));
    // A task needing several operators to agree (approvals above 1): where the agreement stands.
    if (next.approvals) fact('Approvals', next.approvals.given + ' of ' + next.approvals.required + ' approvals');
    if (next.status === 'rejected' && next.operator_notes) fact('Why', next.operator_notes);
    facts.hidden = facts.childNodes.length === 0;
    renderQuestion(next);
    renderResult(next);
    renderFiles(next);
    if (next.receipt) verifyReceipt(next);
  }

  function openQuestion(t) {
    if (FINAL[t.status]) return null;
    var open = (t.questions || []).filter(function (q) {
      return q.answer === null || q.answer === undefined;
    });
    return open[0] || null;
  }
  function renderQuestion(t) {
    var q = openQuestion(t);
    var section = $('question');
    if (!q) {
      section.hidden = true;
      section.removeAttribute('data-question-id');
      return;
    }
    if (section.getAttribute('data-question-id') !== q.question_id) {
      $('answer').value = '';
      $('answer-error').textContent = '';
    }
    section.setAttribute('data-question-id', q.question_id);
    $('question-text').textContent = q.question;
    section.hidden = false;
  }
  function renderResult(t) {
    var section = $('result');
    var body = $('result-body');
    clear(body);
    if (t.status !== 'delivered') {
      section.hidden = true;
      return;
    }
    if (t.result && typeof t.result === 'object') body.appendChild(table(t.result));
    else body.appendChild(el('p', t.operator_notes || 'Delivered (see the attached files).', 'free-text'));
    section.hidden = false;
  }
  function renderFiles(t) {
    var list = $('thumbs');
    clear(list);
    var files = (t.attachments || []).filter(function (f) {
      return typeof f.url === 'string' && f.url.indexOf(origin + '/') === 0;
    });
    files.forEach(function (f) {
      var item = el('li');
      if (/^image\//.test(f.media_type)) {
        var img = el('img');
        img.src = f.url + '/thumbnail';
        img.alt = f.name;
        img.width = 96;
        img.height = 96;
        item.appendChild(img);
      }
      item.appendChild(el('span', f.name, 'name'));
      list.appendChild(item);
    });
    $('files').hidden = files.length === 0;
  }

  // ---- The receipt, checked here against the published keys (as the status page does) ----
  var checkedReceipt = null;
  var receiptTries = 0;
  function bytes(b64) {
    var text = b64.replace(/-/g, '+').replace(/_/g, '/');
    while (text.length % 4) text += '=';
    return Uint8Array.from(atob(text), function (c) {
      return c.charCodeAt(0);
    });
  }
  function hex(buffer) {
    return Array.from(new Uint8Array(buffer))
      .map(function (b) {
        return b.toString(16).padStart(2, '0');
      })
      .join('');
  }
  function receiptSays(ok, text) {
    var box = $('receipt');
    clear(box);
    box.className = 'receipt ' + (ok ? 'ok' : ok === false ? 'bad' : '');
    if (ok !== null) box.appendChild(el('strong', ok ? 'Verified.' : 'Not verified.'));
    box.appendChild(document.createTextNode(' ' + text));
    box.hidden = false;
  }
  function verifyReceipt(t) {
    if (checkedReceipt === t.receipt) return;
    checkedReceipt = t.receipt;
    var parts = String(t.receipt).split('.');
    if (parts.length !== 3) return receiptSays(false, 'The receipt is not a compact JWS.');
    if (!window.crypto || !crypto.subtle) return receiptSays(null, 'This browser cannot check the receipt.');
    var header, payload;
    try {
      var decoder = new TextDecoder();
      header = JSON.parse(decoder.decode(bytes(parts[0])));
      payload = JSON.parse(decoder.decode(bytes(parts[1])));
    } catch (_) {
      return receiptSays(false, 'The receipt cannot be read.');
    }
    fetch(origin + '/.well-known/jwks.json')
      .then(function (response) {
        return response.json();
      })
      .then(function (jwks) {
        var jwk = (jwks.keys || []).filter(function (k) {
          return k.kid === header.kid;
        })[0];
        if (!jwk || header.alg !== 'EdDSA') return receiptSays(false, 'Its key is not among the published keys.');
        return crypto.subtle
          .importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: 'Ed25519' }, false, ['verify'])
          .then(function (key) {
            return crypto.subtle.verify({ name: 'Ed25519' }, key, bytes(parts[2]), new TextEncoder().encode(parts[0] + '.' + parts[1]));
          })
          .then(function (signed) {
            return crypto.subtle.digest('SHA-256', new TextEncoder().encode(t.operator_notes || '')).then(function (digest) {
              if (!signed) return receiptSays(false, 'The signature is invalid.');
              if (payload.task_id !== t.task_id || payload.sub !== t.task_id) return receiptSays(false, 'It was issued for another task.');
              if (new URL(payload.iss).origin !== origin) return receiptSays(false, 'It was issued by another service.');
              if (hex(digest) !== payload.deliverable_sha256) return receiptSays(false, 'The result shown differs from the one signed.');
              receiptSays(
                true,
                'Signed by the service on ' +
                  when(payload.iat * 1000) +
                  '; the result above is exactly what was signed (checked here against the published keys).',
              );
            });
          });
      })
      .catch(function () {
        // A failed fetch of the keys: said plainly, and tried again a few times.
        checkedReceipt = null;
        receiptSays(null, 'The receipt could not be checked right now; trying again.');
        receiptTries += 1;
        if (receiptTries < 4)
          setTimeout(function () {
            if (task && task.receipt) verifyReceipt(task);
          }, 2000 * receiptTries);
      });
  }

  // ---- Following the task ----
  function refusalText(body) {
    if (body.error === 'task_not_found') return 'No task has this id: check the task_id the service returned.';
    var details = Array.isArray(body.details) && body.details.length > 0 ? ' (' + body.details.join('; ') + ')' : '';
    return (body.message || 'The service refused the request.') + details;
  }
  function follow() {
    if (following || stopped || !taskId || (task && FINAL[task.status])) return;
    following = true;
    var args = { task_id: taskId, wait_seconds: task ? MAX_WAIT_SECONDS : 0 };
    if (task) args.known_updated_at = task.updated_at;
    callTool('check_task_status', args, (args.wait_seconds + 15) * 1000)
      .then(function (answer) {
        following = false;
        if (!answer.ok) {
          say(refusalText(answer.body));
          if (answer.body.error === 'task_not_found') stopped = true;
          else setTimeout(follow, 30000);
          return;
        }
        if (answer.body.task_id) {
          say('');
          render(answer.body);
        }
        follow();
      })
      .catch(function () {
        following = false;
        say('The conversation app is not passing on updates right now; the card will try again in a minute.');
        setTimeout(follow, 60000);
      });
  }

  function onToolInput(args) {
    if (!taskId && typeof args.task_id === 'string') taskId = args.task_id;
  }
  function onToolResult(result) {
    var answer = resultBody(result);
    if (!answer.ok) {
      // The tool the agent called was refused: say so; a known task is still followed.
      say(refusalText(answer.body));
      if (!taskId || answer.body.error === 'task_not_found') {
        $('status').textContent = 'Not found';
        return;
      }
    } else if (answer.body.task_id) {
      taskId = answer.body.task_id;
      // A full task (check_task_status, answer_operator_question) is shown at once; a submission is looked up.
      if (answer.body.status_history) render(answer.body);
      else $('status').textContent = STATUS_TEXT[answer.body.status] || answer.body.status;
    }
    follow();
  }

  // ---- Answering the operator ----
  // A click, not the form's submit: a frame sandboxed without allow-forms never fires submit.
  $('answer-form').addEventListener('submit', function (event) {
    event.preventDefault();
  });
  $('answer').addEventListener('keydown', function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === 'Enter') sendAnswer();
  });
  $('answer-send').addEventListener('click', sendAnswer);
  function sendAnswer() {
    var section = $('question');
    var questionId = section.getAttribute('data-question-id');
    var text = $('answer').value.trim();
    var error = $('answer-error');
    if (!text) return void (error.textContent = 'Write an answer first.');
    if (text.length > MAX_ANSWER) return void (error.textContent = 'An answer is at most 5000 characters; this one has ' + text.length + '.');
    error.textContent = '';
    var button = $('answer-send');
    button.disabled = true;
    button.textContent = 'Sending\u2026';
    var done = function () {
      button.disabled = false;
      button.textContent = 'Send answer';
    };
    callTool('answer_operator_question', { task_id: taskId, question_id: questionId, answer: text })
      .then(function (answer) {
        done();
        if (answer.ok && answer.body.task_id) {
          render(answer.body);
          say('Your answer was sent to the operator.');
          return;
        }
        if (answer.body.error === 'already_answered') say('This question was already answered elsewhere; the card shows the latest.');
        else error.textContent = refusalText(answer.body);
        // Whatever happened meanwhile (answered by REST, task now final), show the task as it is.
        callTool('check_task_status', { task_id: taskId }).then(function (now) {
          if (now.ok && now.body.task_id) render(now.body);
        });
      })
      .catch(function () {
        done();
        error.textContent = 'The conversation app did not pass the answer on; try again.';
      });
  }

  // ---- Start ----
  request('ui/initialize', {
    appInfo: { name: 'human-task-card', version: '1.0.0' },
    appCapabilities: {},
    protocolVersion: PROTOCOL_VERSION,
  })
    .then(function (result) {
      applyContext((result && result.hostContext) || {});
      notify('ui/notifications/initialized', {});
    })
    .catch(function () {
      $('status').textContent = 'Not connected';
      say('The conversation app did not answer this card. The task goes on; its status page has the same information.');
    });
})();
