import { CLIENT_LIBRARIES, CLIENTS_SUMMARY } from '../../docs/clients.js';
import type { DocumentSet } from '../../docs/document-set.js';
import { DOCUMENTS, type DocumentInfo } from '../../docs/endpoints.js';
import type { LiveFigures } from '../../docs/live.js';
import { html, type SafeHtml } from '../../domain/html.js';
import { type Block, toHtml, toMarkdown } from '../../domain/markup.js';
import type { ServiceDeps } from '../../services/context.js';
import { duration } from './format.js';

/** /docs and one page per document: the same documents, for people. */

type Json = Record<string, unknown>;

function rawLink(doc: DocumentInfo): SafeHtml {
  return html`<a href="${doc.path}"><code>${doc.path}</code></a>`;
}

export function docsIndexBody(): SafeHtml {
  return html`<h1>Documents for agents</h1>
<p class="lead">Every document is generated from the same profile, catalog, limits and schemas, so they never disagree. Each has a page here for people and a raw form for programs.</p>
<div class="grid">
${DOCUMENTS.map(
  (d) =>
    html`<div class="card"><h2 class="flush-top"><a href="/docs/${d.id}">${d.title}</a></h2><p class="small">${d.description}</p><p class="small muted links">${rawLink(d)}${d.aliases.map((a) => html` <a href="${a}"><code>${a}</code></a>`)}</p></div>`,
)}
</div>
<h2>Client libraries</h2>
<ul>${CLIENT_LIBRARIES.map((c) => html`<li>${c.language}: <code>${c.package}</code> (<code>${c.path}/</code> in the service's source): ${c.what.replace(/`/g, '')}</li>`)}</ul>
<p class="small">${CLIENTS_SUMMARY}</p>`;
}

export function docsIndexMarkdown(base: string): string {
  return toMarkdown([{ h: 1, text: 'Documents for agents' }, { list: DOCUMENTS.map((d) => `[${d.title}](${base}${d.path}): ${d.description}`) }]);
}

/** The page has its own h1; the document's title would repeat it. */
function withoutTitle(blocks: readonly Block[]): Block[] {
  return blocks.filter((b, i) => !(i === 0 && 'h' in b && b.h === 1));
}

function pretty(value: unknown): SafeHtml {
  return html`<details><summary>The whole document</summary><pre tabindex="0"><code>${JSON.stringify(value, null, 2)}</code></pre></details>`;
}

function liveFigures(live: LiveFigures | null): SafeHtml {
  if (!live) return html`<p class="muted">Live figures are unavailable right now.</p>`;
  return html`<div class="figures">
<div class="figure"><b>${live.open_queue}</b><span>open tasks</span></div>
<div class="figure"><b>${duration(live.time_to_first_view_seconds.median)}</b><span>median to first look; p90 ${duration(live.time_to_first_view_seconds.p90)}</span></div>
<div class="figure"><b>${duration(live.time_to_acceptance_seconds.median)}</b><span>median to acceptance; p90 ${duration(live.time_to_acceptance_seconds.p90)}</span></div>
<div class="figure"><b>${live.seen_within_target.share === null ? '—' : `${Math.round(live.seen_within_target.share * 100)} %`}</b><span>of tasks seen within ${live.seen_within_target.target_hours} h (${live.seen_within_target.on_time} of ${live.seen_within_target.due}, ${live.seen_within_target.window_days} days)</span></div>
<div class="figure"><b>${live.remaining_capacity_today.tasks}</b><span>of ${live.remaining_capacity_today.task_cap} tasks left today</span></div>
</div>
<p class="small muted">Over the last ${live.window_days} days (times and the share: its ${live.sample_tasks.toLocaleString('en')} most recent tasks at most), as of ${live.as_of}.</p>`;
}

function servicesCards(deps: ServiceDeps): SafeHtml {
  return html`${deps.catalog.map(
    (s) => html`<div class="card"><h2 class="flush-top">${s.title} <span class="badge">${s.task_type}</span></h2>
<p>${s.description}</p>
<dl class="facts"><dt>Service id</dt><dd><code>${s.service_id}</code></dd><dt>Where</dt><dd>${s.location_required ? 'in person' : 'remote'}</dd>
<dt>Result formats</dt><dd>${s.output_formats.join(', ')}</dd><dt>Response time</dt><dd>${s.estimated_response_time}</dd></dl>
<details><summary>Example request</summary><pre tabindex="0"><code>${JSON.stringify(s.example_request, null, 2)}</code></pre></details></div>`,
  )}`;
}

function humanPage(deps: ServiceDeps, live: LiveFigures | null): SafeHtml {
  const o = deps.profile.operator;
  return html`<div class="card"><dl class="facts">
<dt>Name</dt><dd>${o.name}</dd><dt>Role</dt><dd>${o.role}</dd><dt>Languages</dt><dd>${o.languages.join(', ')}</dd>
<dt>Service area</dt><dd>${o.service_area}</dd><dt>Working hours</dt><dd>${o.working_hours} (${o.timezone})</dd>
<dt>Response target</dt><dd>within ${deps.profile.response_target_hours} hours</dd></dl></div>
<h2>Live availability</h2>${liveFigures(live)}
<h2>Policy</h2><p>${deps.profile.policy.review}</p>
<p>The operator will not do:</p>
<ul>${deps.profile.policy.will_not_do.map((w) => html`<li>${w}</li>`)}</ul>
<p class="muted">${deps.profile.policy.privacy}</p>`;
}

function openapiPage(openapi: Json): SafeHtml {
  const rows: SafeHtml[] = [];
  for (const [path, item] of Object.entries((openapi.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const codes = Object.keys((op.responses ?? {}) as Json).join(' ');
      rows.push(
        html`<tr><td><code>${method.toUpperCase()}</code></td><td><code>${path}</code></td><td>${String(op.summary ?? '')}${Array.isArray(op.security) && op.security.length > 0 ? ' (operator key)' : ''}</td><td class="small">${codes}</td></tr>`,
      );
    }
  }
  return html`<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">What</th><th scope="col">Statuses</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function agentPage(deps: ServiceDeps, manifest: Json): SafeHtml {
  const steps = (manifest.how_it_works ?? []) as string[];
  const endpoints = (manifest.endpoints ?? {}) as Record<string, { method: string; url: string; description: string }>;
  return html`<h2>How it works</h2><ol>${steps.map((s) => html`<li>${s}</li>`)}</ol>
<h2>Endpoints</h2><div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Name</th><th scope="col">Call</th><th scope="col">What</th></tr></thead><tbody>
${Object.entries(endpoints).map(([name, e]) => html`<tr><td>${name}</td><td><code>${e.method} ${e.url}</code></td><td>${e.description}</td></tr>`)}
</tbody></table></div>
<h2>Pricing</h2><p>Free pilot. The service never asks for payment or credentials.</p>
<h2>Task types</h2><p>Accepted: ${deps.catalog.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s.task_type}</code>`)}.</p>
<p>Never accepted: ${deps.profile.rejected_task_types.join('; ')}.</p>`;
}

/** The body of /docs/<id>; null for an unknown id. */
export function documentBody(deps: ServiceDeps, doc: DocumentInfo, set: DocumentSet, live: LiveFigures | null): SafeHtml {
  const head = html`<p class="muted small crumbs"><a href="/docs">Documents</a> / ${doc.title}</p>
<h1>${doc.title}</h1>
<p class="lead">${doc.description}</p>
<p class="links"><span>Raw (${doc.mediaType}):</span> ${rawLink(doc)}${doc.aliases.map((a) => html` <a href="${a}"><code>${a}</code></a>`)}</p>`;
  switch (doc.id) {
    case 'agent':
      return html`${head}${agentPage(deps, set.manifest)}${pretty(set.manifest)}`;
    case 'agent-card':
      return html`${head}<p>The A2A agent card: the same name, skills and modes as the platform manifest, with the service's real interfaces (MCP and the REST API). Its <code>signatures</code> entry is a detached JWS over the card's RFC 8785 canonical JSON (without <code>signatures</code>), made with a receipt key from <a href="/.well-known/jwks.json">/.well-known/jwks.json</a>.</p>${pretty(set.agentCard)}`;
    case 'human':
      return html`${head}${humanPage(deps, live)}${pretty({ ...set.human, live })}`;
    case 'capabilities':
      return html`${head}<h2>Live figures</h2>${liveFigures(live)}<h2>Capabilities</h2>${servicesCards(deps)}${pretty({ ...set.capabilities, live })}`;
    case 'services':
      return html`${head}${servicesCards(deps)}<p>Programs page through the same list with <code>GET /api/v1/services?limit=&amp;cursor=</code>.</p>`;
    case 'openapi':
      return html`${head}${openapiPage(set.openapi)}`;
    case 'oauth-protected-resource':
      return html`${head}<p>Nothing here is token-protected: there is no authorization server and no scope. The public endpoints take no <code>Authorization</code> header.</p><pre tabindex="0"><code>${set.bodies.protectedResource.body}</code></pre>`;
    case 'llms':
      return html`${head}<pre tabindex="0"><code>${set.bodies.llms.body}</code></pre>`;
    case 'llms-full':
      return html`${head}<pre tabindex="0"><code>${set.bodies.llmsFull.body}</code></pre>`;
    case 'index':
      return html`${head}<div class="card">${toHtml(withoutTitle(set.indexBlocks), { headingOffset: 0 })}</div>`;
    case 'api':
      return html`${head}<div class="card">${toHtml(withoutTitle(set.apiBlocks), { headingOffset: 0 })}</div>`;
    case 'jwks':
      return html`${head}<p>Delivery receipts are compact JWS signed with Ed25519. This document lists the public keys by <code>kid</code>; keys that were rotated out stay listed so old receipts keep verifying. Each task’s status page explains how to check its receipt.</p>`;
    case 'mcp':
      return html`${head}<p>The tool server speaks streamable HTTP at <code>${deps.config.baseUrl}/mcp</code> (POST, stateless, no authentication). The card lists its tools and their descriptions; the tools take the same fields as the REST API and share its limits.</p>`;
    default:
      return head;
  }
}

export function documentMarkdown(deps: ServiceDeps, doc: DocumentInfo, set: DocumentSet): string {
  if (doc.id === 'index') return set.bodies.index.body;
  if (doc.id === 'api') return set.bodies.api.body;
  if (doc.id === 'llms') return set.bodies.llms.body;
  if (doc.id === 'llms-full') return set.bodies.llmsFull.body;
  const base = deps.config.baseUrl;
  const json: Record<string, Json | undefined> = {
    agent: set.manifest,
    'agent-card': set.agentCard,
    human: set.human,
    capabilities: set.capabilities,
    services: set.services,
    'oauth-protected-resource': set.protectedResource,
  };
  const body = json[doc.id];
  return toMarkdown([
    { h: 1, text: doc.title },
    { p: doc.description },
    { p: `Raw: ${base}${doc.path} (${doc.mediaType})` },
    ...(body ? [{ code: JSON.stringify(body, null, 2), lang: 'json' }] : []),
  ]);
}
