// Human-readable output of the CLI (the --json output is the engine's own result objects).
import { routeLabel } from '../contract/routes.ts';
import type { DiscoveryResult } from '../contract/types.ts';
import { capabilityName, type DocumentSummary, type Finding, type RsLn, type RsMd } from '../engine/documents/model.ts';

export function formatFindings(findings: Finding[]): string[] {
  if (findings.length === 0) return ['Findings: none'];
  const errors = findings.filter((f) => f.severity === 'error').length;
  const lines = [`Findings: ${errors} error(s), ${findings.length - errors} warning(s)`];
  for (const f of findings) {
    lines.push(formatFinding(f));
  }
  return lines;
}

/** One finding on one line; its line number once (a refusal's message may already name it). */
export function formatFinding(f: Finding): string {
  const line = f.line !== undefined && !f.message.includes(`line ${f.line}`) ? ` (line ${f.line})` : '';
  return `  ${f.severity === 'error' ? 'error  ' : 'warning'} ${f.code}: ${f.message}${line}`;
}

export function formatDiscovery(result: DiscoveryResult): string {
  const lines = [`Discovery from ${result.start}`, '', 'Routes tried:'];
  const routeWidth = Math.max(0, ...result.routes.map((r) => routeLabel(r.route).length));
  for (const step of result.routes) {
    lines.push(`  ${step.found ? '✓' : '✗'} ${routeLabel(step.route).padEnd(routeWidth)}  ${step.url}  ${step.message}`);
  }
  if (result.routes.length === 0) lines.push('  (none)');
  lines.push('');
  const found = result.sourceDescription !== null || result.capabilityLists.length > 0;
  if (result.sourceDescription !== null) lines.push(`Source Description: ${result.sourceDescription}`);
  else if (found) lines.push('Source Description: not found (Capability Lists only)');
  for (const list of result.capabilityLists) {
    lines.push(`  Capability List ${list.url}`);
    list.capabilities.forEach((cap, i) => {
      const branch = i === list.capabilities.length - 1 ? '└─' : '├─';
      const hub = cap.hub ? `  (hub ${cap.hub})` : '';
      lines.push(`    ${branch} ${capabilityName(cap.capability)}: ${cap.url}${hub}`);
    });
    if (list.capabilities.length === 0) lines.push('    (no capabilities)');
  }
  if (!found) lines.push('No ResourceSync Source found.');
  lines.push('', ...formatFindings(result.findings));
  return lines.join('\n') + '\n';
}

function formatMd(md: RsMd): string {
  const parts = Object.entries(md)
    .filter(([key, value]) => key !== 'capability' && value !== undefined)
    .map(([key, value]) => `${key}=${String(value)}`);
  return parts.length > 0 ? parts.join(', ') : '(none)';
}

function formatLink(link: RsLn): string {
  const extra = Object.entries(link)
    .filter(([key, value]) => key !== 'rel' && key !== 'href' && value !== undefined)
    .map(([key, value]) => `${key}=${String(value)}`);
  return `${link.rel} → ${link.href}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

export function formatSummary(summary: DocumentSummary): string {
  const lines = [
    summary.url,
    `  ${capabilityName(summary.capability, summary.isIndex)} (<${summary.root}>), ${summary.entries} ${summary.entries === 1 ? 'entry' : 'entries'}`,
    `  metadata: ${formatMd(summary.md)}`,
  ];
  if (summary.links.length === 0) lines.push('  links: (none)');
  else {
    lines.push('  links:');
    for (const link of summary.links) lines.push(`    ${formatLink(link)}`);
  }
  lines.push('', ...formatFindings(summary.findings));
  return lines.join('\n') + '\n';
}
