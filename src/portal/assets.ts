/**
 * The portal's one stylesheet and one script, served from /portal/assets/ (the pages' Content
 * Security Policy allows no inline style or script).
 *
 * The stylesheet: readable at 400 % zoom and on a phone width (one column below 40rem, wide
 * tables scroll inside their own focusable region), a visible focus ring on everything that
 * takes focus, colours with at least 4.5:1 contrast. The script: the copy buttons beside a key's
 * or secret's value (the value is on the page either way; without script the button stays hidden),
 * and a failed form's error summary: focus moved to it on load, its links focusing their field.
 */
export const PORTAL_CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1b1b;background:#f6f7f9}
a{color:#0b4fb0}
:focus-visible{outline:3px solid #b35c00;outline-offset:2px}
.skip{position:absolute;left:-999rem}
.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:10}
header{background:#14213d;color:#fff;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header a{color:#fff}
header .brand{font-weight:700;margin-right:auto}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
nav a[aria-current="page"]{font-weight:700;text-decoration-thickness:3px}
header form{margin:0}
header button{background:transparent;color:#fff;border:1px solid #fff}
main{max-width:72rem;margin:0 auto;padding:1rem}
.modes{display:flex;gap:.5rem;margin:.5rem 0 1rem;flex-wrap:wrap}
.modes a{padding:.25rem .75rem;border:1px solid #0b4fb0;border-radius:999px;text-decoration:none}
.modes a[aria-current="true"]{background:#0b4fb0;color:#fff}
.notice{padding:.75rem 1rem;border-left:4px solid #1a7f37;background:#e9f6ec;margin:1rem 0}
.alert{padding:.75rem 1rem;border-left:4px solid #a4000f;background:#fdecee;margin:1rem 0}
.live-banner{padding:.75rem 1rem;border:3px solid #8a1c00;background:#fff4e5;color:#5c1300;margin:0 0 1rem}
.error-summary{padding:.75rem 1rem;border:4px solid #a4000f;background:#fff;margin:1rem 0}
.error-summary h2{margin:0 0 .5rem;font-size:1.25rem}
.error-summary ul{margin:0;padding-left:1.25rem}
.error-summary a{color:#a4000f;font-weight:600}
.secret{font-family:ui-monospace,monospace;word-break:break-all;background:#fff;border:1px solid #6b6f76;padding:.5rem;display:block}
.table-wrap{overflow-x:auto;background:#fff;border:1px solid #c9ccd1;border-radius:4px}
table{border-collapse:collapse;width:100%}
caption{text-align:left;font-weight:700;padding:.5rem}
th,td{text-align:left;padding:.5rem;border-top:1px solid #e1e3e6;vertical-align:top}
td form{display:inline-block;margin:0 .25rem .25rem 0}
fieldset{border:1px solid #c9ccd1;border-radius:4px;background:#fff;margin:1rem 0;padding:1rem}
legend{font-weight:700;padding:0 .25rem}
label{display:block;font-weight:600;margin-top:.75rem}
.hint{color:#4a4f57;font-size:.9rem;margin:.1rem 0}
input,select,textarea{font:inherit;padding:.4rem;border:1px solid #6b6f76;border-radius:4px;max-width:100%;width:28rem}
input[type="checkbox"]{width:auto}
label.inline{display:inline;font-weight:400;margin-left:.25rem}
h2{margin-top:1.5rem}
.field-error{color:#a4000f;font-weight:600;margin:.25rem 0}
button,.button{font:inherit;padding:.4rem .9rem;border-radius:4px;border:1px solid #0b4fb0;background:#0b4fb0;color:#fff;cursor:pointer;margin-top:.75rem}
button.secondary{background:#fff;color:#0b4fb0}
button.danger{background:#a4000f;border-color:#a4000f}
.void{color:#a4000f;text-transform:uppercase}
.pager{list-style:none;padding:0;display:flex;gap:1rem;flex-wrap:wrap}
td button{margin-top:0}
form > a{margin-left:1rem;display:inline-block;margin-top:.75rem}
.copy{display:none}
.js .copy{display:inline-block}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;background:#fff;border:1px solid #c9ccd1;padding:1rem;border-radius:4px}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
h1{overflow-wrap:anywhere}
@media (max-width:40rem){dl{grid-template-columns:1fr}input,select,textarea{width:100%}}
`;

export const PORTAL_JS = `
document.documentElement.classList.add('js');
// A region marked data-refresh-seconds (an endpoint's deliveries) is read again from its page that
// often and replaced when it changed, saying so in its status line; for ten minutes at most, so an
// open page does not keep an idle session alive for ever.
var live = document.querySelector('[data-refresh-seconds]');
if (live && live.id && window.fetch && window.DOMParser) {
  var every = Math.max(2, Number(live.getAttribute('data-refresh-seconds')) || 10) * 1000;
  var until = Date.now() + 600000;
  var liveStatus = document.getElementById(live.id + '-status');
  var refresh = function () {
    if (Date.now() > until) {
      if (liveStatus) liveStatus.textContent = 'Automatic refresh stopped after ten minutes: refresh the deliveries to see new ones.';
      return;
    }
    if (document.hidden) return setTimeout(refresh, every);
    fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        var fresh = text && new DOMParser().parseFromString(text, 'text/html').getElementById(live.id);
        if (fresh && fresh.innerHTML !== live.innerHTML) {
          live.innerHTML = fresh.innerHTML;
          if (liveStatus) liveStatus.textContent = 'Deliveries updated at ' + new Date().toISOString().slice(11, 16) + ' UTC.';
        }
      })
      .catch(function () {})
      .then(function () { setTimeout(refresh, every); });
  };
  setTimeout(refresh, every);
}
// A failed form's error summary takes focus (it is read out and scrolled to); its links focus their field.
var summary = document.querySelector('.error-summary');
if (summary) summary.focus();
document.addEventListener('click', function (e) {
  var link = e.target.closest && e.target.closest('.error-summary a[href^="#"]');
  if (!link) return;
  var target = document.getElementById(link.getAttribute('href').slice(1));
  if (!target) return;
  e.preventDefault();
  var label = target.closest('fieldset') && target.type === 'checkbox' ? target.closest('fieldset').querySelector('legend') : document.querySelector('label[for="' + target.id + '"]');
  (label || target).scrollIntoView();
  target.focus({ preventScroll: true });
});
document.addEventListener('click', function (e) {
  var button = e.target.closest && e.target.closest('button[data-copy]');
  if (!button) return;
  var source = document.getElementById(button.getAttribute('data-copy'));
  var status = document.getElementById(button.getAttribute('data-copy') + '-status');
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(function () {
    if (status) status.textContent = 'Copied to the clipboard.';
  }, function () {
    if (status) status.textContent = 'Could not copy: select the value and copy it by hand.';
  });
});
`;
