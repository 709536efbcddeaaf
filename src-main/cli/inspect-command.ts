// rsdesk inspect <url-or-file>: reads one document (streamed) and prints its summary and findings.
import { fileURLToPath } from 'node:url';
import { DocumentError } from '../engine/documents/errors.ts';
import type { DocumentSummary, Finding } from '../engine/documents/model.ts';
import { readDocumentFile } from '../engine/documents/reader.ts';
import { bearerFor, Http, NetworkError } from '../engine/http/index.ts';
import { loadDocument } from '../engine/load.ts';
import { formatFindings, formatSummary } from './format.ts';
import type { Io } from './io.ts';
import { splitUserinfo } from '../engine/http/userinfo.ts';
import { UsageError } from './usage.ts';

export interface InspectOptions {
  target: string;
  json: boolean;
  token?: string;
  timeoutMs?: number;
  userAgent: string;
}

function isHttpUrl(target: string): boolean {
  return /^https?:\/\//i.test(target);
}

async function read(options: InspectOptions): Promise<DocumentSummary> {
  if (isHttpUrl(options.target)) {
    const http = new Http({ sourceHeaders: bearerFor(options.target, options.token), timeoutMs: options.timeoutMs, userAgent: options.userAgent });
    try {
      return (await loadDocument(http, options.target)).summary;
    } finally {
      await http.close();
    }
  }
  const path = /^file:/i.test(options.target) ? fileURLToPath(options.target) : options.target;
  return readDocumentFile(path);
}

export async function inspectCommand(options: InspectOptions, io: Io): Promise<number> {
  // Not sent by the client, and printed with the URL in every message: refused, naming the URL without them.
  const userinfo = isHttpUrl(options.target) ? splitUserinfo(options.target) : null;
  if (userinfo !== null) {
    throw new UsageError(`The URL has a user name and password in it, which are not sent and would be shown with it: give ${userinfo.url} without them, and the credentials with --token (a bearer token).`);
  }
  let summary: DocumentSummary;
  try {
    summary = await read(options);
  } catch (error) {
    // A refusal (not a ResourceSync document, unreachable, too large...) is a result, not a crash. Its message
    // is printed once: in the JSON, as the refusal's finding, or (when nothing could be read at all: no such file,
    // a server that did not answer) as the one line on stderr.
    if (!(error instanceof DocumentError) && !(error instanceof NetworkError)) throw error;
    const finding: Finding = { severity: 'error', code: error.code, message: error.message };
    if (error instanceof DocumentError && error.line !== undefined) finding.line = error.line;
    if (options.json) {
      io.out(`${JSON.stringify({ url: options.target, error: finding, findings: [finding] }, null, 2)}\n`);
    } else if (error instanceof NetworkError || error.code === 'io') {
      io.err(`rsdesk: ${error.message}\n`);
    } else {
      io.out(`${options.target}\n  refused\n\n${formatFindings([finding]).join('\n')}\n`);
    }
    return 1;
  }
  if (options.json) {
    const { url, root, capability, md, links, entries, findings } = summary;
    io.out(`${JSON.stringify({ url, root, capability, md, links, entries, findings }, null, 2)}\n`);
  } else {
    io.out(formatSummary(summary));
  }
  return summary.findings.some((f) => f.severity === 'error') ? 1 : 0;
}
