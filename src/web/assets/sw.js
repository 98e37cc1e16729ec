// The console's service worker, served at /operator/sw.js (a fixed address: its scope) by src/web/operator/alerts/pwa.ts.
'use strict';
self.addEventListener('install', function () {
  self.skipWaiting();
});
self.addEventListener('activate', function (event) {
  event.waitUntil(self.clients.claim());
});
self.addEventListener('push', function (event) {
  var data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = {};
  }
  var url = typeof data.url === 'string' && data.url.indexOf('/operator') === 0 ? data.url : '/operator';
  event.waitUntil(
    self.registration.showNotification(data.title || 'Operator desk', {
      body: data.body || '',
      tag: data.tag,
      data: { url: url },
      icon: '/operator/assets/icon-192.png',
      badge: '/operator/assets/icon-192.png',
    }),
  );
});
self.addEventListener('notificationclick', function (event) {
  event.notification.close();
  var url = (event.notification.data && event.notification.data.url) || '/operator';
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then(function (list) {
      for (var i = 0; i < list.length; i++) {
        if (new URL(list[i].url).pathname === url && 'focus' in list[i]) return list[i].focus();
      }
      return self.clients.openWindow(url);
    }),
  );
});
