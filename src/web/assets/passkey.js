// The passkey ceremonies (served hashed by src/web/operator/auth/passkey-assets.ts).
(function () {
  'use strict';
  var W = window.SimpleWebAuthnBrowser;
  if (!W || !W.browserSupportsWebAuthn()) return;
  function post(url, body) {
    return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' }).then(
      function (res) {
        return res.json().then(function (json) {
          if (!res.ok) throw new Error(json.message || 'The passkey step failed.');
          return json;
        });
      },
    );
  }
  function say(message) {
    var status = document.getElementById('passkey-status');
    if (status) {
      status.textContent = message;
      status.hidden = false;
    }
  }
  var register = document.querySelector('[data-passkey-register]');
  if (register) {
    register.hidden = false;
    register.addEventListener('click', function () {
      var base = register.getAttribute('data-passkey-register');
      post(base + '/options', {})
        .then(function (ceremony) {
          return W.startRegistration({ optionsJSON: ceremony.options }).then(function (response) {
            return post(base + '/register', { challenge_id: ceremony.challenge_id, response: response });
          });
        })
        .then(function (done) {
          window.location.assign(done.next);
        })
        .catch(function (error) {
          say(error.message);
        });
    });
  }
  var signin = document.querySelector('[data-passkey-signin]');
  if (signin) {
    signin.hidden = false;
    signin.addEventListener('click', function () {
      post('/operator/passkey/options', {})
        .then(function (ceremony) {
          return W.startAuthentication({ optionsJSON: ceremony.options }).then(function (response) {
            return post('/operator/passkey/signin', {
              challenge_id: ceremony.challenge_id,
              response: response,
              next: signin.getAttribute('data-passkey-signin'),
            });
          });
        })
        .then(function (done) {
          window.location.assign(done.next);
        })
        .catch(function (error) {
          say(error.message);
        });
    });
  }
  // An approval signed by the passkey the session was opened with (docs/approvals.md): its
  // challenge is the approval challenge the server computed for the deliverable shown.
  var approvals = document.querySelectorAll('form[data-approve-challenge]');
  Array.prototype.forEach.call(approvals, function (form) {
    form.addEventListener('submit', function (event) {
      var field = form.querySelector('input[name="assertion"]');
      if (!field || field.value) return;
      event.preventDefault();
      W.startAuthentication({
        optionsJSON: {
          challenge: form.getAttribute('data-approve-challenge'),
          rpId: window.location.hostname,
          allowCredentials: [{ id: form.getAttribute('data-approve-credential'), type: 'public-key' }],
          userVerification: 'preferred',
          timeout: 120000,
        },
      })
        .then(function (response) {
          field.value = JSON.stringify(response);
          form.submit();
        })
        .catch(function (error) {
          say(error.message);
        });
    });
  });
})();
