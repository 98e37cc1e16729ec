import { createHash } from 'node:crypto';

/**
 * The one stylesheet of the public pages, inlined in each page (no extra request) and allowed by
 * its hash in the Content-Security-Policy, so no other style and no script can run.
 */
export const CSS = `
:root{--bg:#f7f7f4;--card:#fff;--ink:#1c1f23;--muted:#5b626b;--line:#e2e2dc;--accent:#1f5f99;--accent-ink:#fff;--accent-soft:#e7f0f8;
--ok:#1d6b3a;--ok-soft:#e4f3e8;--warn:#8a5300;--warn-soft:#fbf0dc;--bad:#a4262c;--bad-soft:#fbe9ea;--radius:12px;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#14171a;--card:#1c2024;--ink:#e8e9ea;--muted:#a2a9b1;--line:#30363c;--accent:#79b4ec;--accent-ink:#0c1722;
--accent-soft:#1b2a38;--ok:#7fd39a;--ok-soft:#173222;--warn:#f0c070;--warn-soft:#3a2c12;--bad:#ff9a9f;--bad-soft:#3d1b1e}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);line-height:1.55;font-size:1.0625rem}
a{color:var(--accent);text-underline-offset:.15em}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--card);padding:.5rem 1rem;z-index:2}
.skip:focus{left:.5rem;top:.5rem}
header.site{background:var(--card);border-bottom:1px solid var(--line)}
.bar{max-width:60rem;margin:0 auto;padding:.8rem 1.25rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;justify-content:space-between}
.brand{font-weight:700;color:var(--ink);text-decoration:none;display:flex;gap:.55rem;align-items:center}
.brand .mark{display:inline-grid;place-items:center;width:1.9rem;height:1.9rem;border-radius:8px;background:var(--accent);color:var(--accent-ink);font-size:1rem}
nav.main{display:flex;flex-wrap:wrap;gap:.25rem 1.1rem;font-size:.95rem}
nav.main a{color:var(--muted);text-decoration:none;padding:.2rem 0;display:inline-flex;align-items:center;min-height:2.75rem}
nav.main a:hover,nav.main a[aria-current=page]{color:var(--ink);text-decoration:underline}
main{max-width:60rem;margin:0 auto;padding:1.5rem 1.25rem 3rem;overflow-wrap:anywhere}
footer.site{max-width:60rem;margin:0 auto;padding:1.5rem 1.25rem 2.5rem;color:var(--muted);font-size:.9rem;border-top:1px solid var(--line)}
h1{font-size:clamp(1.6rem,4.5vw,2.35rem);line-height:1.2;margin:.4rem 0 .75rem;letter-spacing:-.01em}
h2{font-size:1.35rem;line-height:1.3;margin:2rem 0 .6rem}
h3{font-size:1.1rem;margin:1.4rem 0 .4rem}
p{margin:.5rem 0 .9rem}
.lead{font-size:1.15rem;color:var(--muted);max-width:44rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:1.25rem 1.25rem;margin:1rem 0}
.grid{display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr))}
.grid .card{margin:0}
.card h3{margin-top:0}
.muted{color:var(--muted)}
.small{font-size:.9rem}
ul.clean{list-style:none;padding:0;margin:0}
ul.ticks li{margin:.25rem 0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
code{background:var(--accent-soft);padding:.05em .35em;border-radius:5px;overflow-wrap:anywhere}
pre{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:.9rem 1rem;overflow:auto;max-height:32rem}
pre code{background:none;padding:0}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.table-wrap{overflow-x:auto;margin:.75rem 0}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
td:first-child{white-space:nowrap}
td code{overflow-wrap:normal}
.result-table th{text-transform:none;letter-spacing:0;width:35%;overflow-wrap:anywhere}
.result-table td{overflow-wrap:anywhere;white-space:normal}
.result-list{margin:0;padding-left:1.2rem}
th{font-weight:600;color:var(--muted);font-size:.85rem;text-transform:uppercase;letter-spacing:.03em}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(10.5rem,1fr));gap:.75rem;margin:1rem 0}
.figure{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:.8rem 1rem}
.figure b{display:block;font-size:1.45rem;line-height:1.2}
.figure span{color:var(--muted);font-size:.88rem}
.badge{display:inline-block;padding:.15rem .65rem;border-radius:999px;font-size:.85rem;font-weight:600;background:var(--accent-soft);color:var(--accent);vertical-align:middle}
.badge.delivered{background:var(--ok-soft);color:var(--ok)}
.badge.rejected{background:var(--bad-soft);color:var(--bad)}
.badge.accepted{background:var(--warn-soft);color:var(--warn)}
ol.steps{list-style:none;display:flex;gap:.5rem;padding:0;margin:1rem 0;flex-wrap:wrap}
ol.steps li{flex:1 1 0;min-width:0;border-top:4px solid var(--line);padding-top:.45rem;color:var(--muted);font-size:.92rem}
ol.steps li.done{border-color:var(--accent);color:var(--ink)}
ol.steps li.bad{border-color:var(--bad);color:var(--bad)}
ol.steps li b{display:block;font-size:1rem}
dl.facts{display:grid;grid-template-columns:minmax(9rem,max-content) 1fr;gap:.4rem 1.25rem;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
@media (max-width:34rem){dl.facts{grid-template-columns:minmax(6.5rem,38%) 1fr;gap:.45rem .8rem;font-size:.95rem}ol.steps li{font-size:.82rem}ol.steps.how{flex-direction:column}ol.steps.how li{font-size:.95rem}
.figure b{font-size:1.2rem}}
form .field{margin:0 0 1.1rem}
label,.label{display:block;font-weight:600;margin-bottom:.3rem}
.hint{display:block;color:var(--muted);font-size:.88rem;margin:.15rem 0 .35rem;font-weight:400}
input[type=text],input[type=email],input[type=datetime-local],input[type=search],select,textarea{width:100%;font:inherit;color:inherit;background:var(--bg);
border:1px solid var(--line);border-radius:9px;padding:.6rem .7rem;min-height:2.75rem}
textarea{min-height:9rem;resize:vertical}
input[aria-invalid=true],select[aria-invalid=true],textarea[aria-invalid=true]{border-color:var(--bad);box-shadow:0 0 0 1px var(--bad)}
.check{display:flex;gap:.6rem;align-items:center;font-weight:600;min-height:2.75rem}
.check input{width:1.25rem;height:1.25rem;margin-top:.2rem;accent-color:var(--accent)}
fieldset{border:0;padding:0;margin:0 0 1.1rem}
legend{font-weight:600;margin-bottom:.3rem;padding:0}
.choice{display:flex;gap:.6rem;align-items:center;margin:.35rem 0;font-weight:400;min-height:2.75rem}
.choice input{width:1.2rem;height:1.2rem;margin-top:.25rem;accent-color:var(--accent)}
.two{display:grid;gap:0 1rem;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr))}
.error{color:var(--bad);font-size:.92rem;font-weight:600;margin:.3rem 0 0}
.alert{border-radius:var(--radius);padding:.9rem 1.1rem;margin:1rem 0;border:1px solid}
.alert.bad{background:var(--bad-soft);border-color:var(--bad);color:var(--ink)}
.alert.ok{background:var(--ok-soft);border-color:var(--ok)}
.receipt-check{background:var(--accent-soft);border-color:var(--line)}
.receipt-check.ok{background:var(--ok-soft);border-color:var(--ok)}
.receipt-check.bad{background:var(--bad-soft);border-color:var(--bad)}
.alert ul{margin:.3rem 0 0;padding-left:1.2rem}
button,.button{display:inline-block;font:inherit;font-weight:600;background:var(--accent);color:var(--accent-ink);border:0;border-radius:10px;
padding:.75rem 1.4rem;cursor:pointer;text-decoration:none;min-height:2.75rem}
button:hover,.button:hover{filter:brightness(1.08)}
.button.secondary{background:transparent;color:var(--accent);border:1px solid var(--accent)}
.hero{display:grid;gap:1.5rem;grid-template-columns:1fr;align-items:start}
@media (min-width:56rem){.hero.split{grid-template-columns:1.05fr 1fr}}
.pill-list{display:flex;flex-wrap:wrap;gap:.4rem;padding:0;margin:.5rem 0;list-style:none}
.pill-list li{background:var(--card);border:1px solid var(--line);border-radius:999px;padding:.2rem .7rem;font-size:.9rem}
details{margin:.6rem 0}
summary{cursor:pointer;font-weight:600;padding:.65rem 0}
.receipt{word-break:break-all;white-space:pre-wrap}
.flush-top{margin-top:0}
.actions{display:flex;flex-wrap:wrap;gap:.6rem;margin:1rem 0}
.text+dl.facts{margin-top:1rem}
.next{font-size:1.05rem}
.eyebrow{font-size:.95rem;color:var(--muted);margin:1.5rem 0 .25rem}
.files{list-style:none;padding:0;margin:0;display:grid;gap:.75rem}
.files li{display:flex;gap:.75rem;align-items:flex-start;min-width:0}
.files img{width:96px;height:96px;object-fit:cover;border-radius:8px;border:1px solid var(--line);flex:none;background:var(--line)}
.files .meta{min-width:0;overflow-wrap:anywhere}
.files code{word-break:break-all;font-size:.8em}
`;

export const CSS_HASH = `sha256-${createHash('sha256').update(CSS).digest('base64')}`;

// script-src 'self': only the pages' own file (/assets/pages.js), never inline script.
export const CONTENT_SECURITY_POLICY = `default-src 'none'; style-src '${CSS_HASH}'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
