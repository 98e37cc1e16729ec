import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { html } from '../../domain/html.js';

/** The script tags of a page with a passkey button (the invite page, the sign-in page). */
export const PASSKEY_SCRIPTS = html`<script src="/operator/assets/webauthn.js" defer></script><script src="/operator/assets/passkey.js" defer></script>`;

/**
 * The scripts of the passkey ceremonies, served from the console's own origin (its CSP allows
 * scripts from 'self' only): SimpleWebAuthn's browser bundle, read once from the installed package,
 * and the few lines that drive it from the invite and sign-in pages.
 */

/** @simplewebauthn/browser's UMD bundle (window.SimpleWebAuthnBrowser), from node_modules as installed. */
export function webauthnBrowserBundle(): string {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  // entry: <package>/script/index.js; the bundle sits in <package>/dist/bundle.
  return readFileSync(path.join(path.dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

/**
 * Progressive: the passkey buttons stay hidden without this script (the key form still works).
 * `data-passkey-register` holds the invite's base path; `data-passkey-signin` the page to go to after.
 */
export const PASSKEY_JS = `(function () {
  'use strict';
  var W = window.SimpleWebAuthnBrowser;
  if (!W || !W.browserSupportsWebAuthn()) return;
  function post(url, body) {
    return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' })
      .then(function (res) {
        return res.json().then(function (json) {
          if (!res.ok) throw new Error(json.message || 'The passkey step failed.');
          return json;
        });
      });
  }
  function say(message) {
    var status = document.getElementById('passkey-status');
    if (status) { status.textContent = message; status.hidden = false; }
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
        .then(function (done) { window.location.assign(done.next); })
        .catch(function (error) { say(error.message); });
    });
  }
  var signin = document.querySelector('[data-passkey-signin]');
  if (signin) {
    signin.hidden = false;
    signin.addEventListener('click', function () {
      post('/operator/passkey/options', {})
        .then(function (ceremony) {
          return W.startAuthentication({ optionsJSON: ceremony.options }).then(function (response) {
            return post('/operator/passkey/signin', { challenge_id: ceremony.challenge_id, response: response, next: signin.getAttribute('data-passkey-signin') });
          });
        })
        .then(function (done) { window.location.assign(done.next); })
        .catch(function (error) { say(error.message); });
    });
  }
})();
`;
