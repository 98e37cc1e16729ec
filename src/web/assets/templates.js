// Served hashed by src/web/operator/inbox-assets.ts; progressive enhancement only.
(function () {
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
