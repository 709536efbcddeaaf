import { describe, expect, it } from 'vitest';
import type { CheckReport } from './model.ts';
import { csvField, reportCsv, reportJson, reportJsonPieces } from './report.ts';

const report: CheckReport = {
  start: 'http://127.0.0.1:1/',
  sourceDescription: 'http://127.0.0.1:1/sd.xml',
  documents: [
    {
      url: 'http://127.0.0.1:1/sd.xml',
      capability: 'description',
      isIndex: false,
      parent: null,
      entries: 2,
      findings: [{ severity: 'warning', code: 'x', message: 'He said "no", twice\nthen left', line: 3 }],
    },
  ],
  findings: [
    { document: 'http://127.0.0.1:1/sd.xml', severity: 'warning', code: 'x', message: 'He said "no", twice\nthen left', line: 3 },
    { document: 'http://127.0.0.1:1/a,b.xml', severity: 'error', code: 'http-status', message: '=HYPERLINK("http://evil")' },
  ],
  summary: { documents: 1, entries: 2, errors: 1, warnings: 1, truncated: false, cancelled: false },
};

describe('check report formats', () => {
  it('CSV: header, one row per finding, RFC 4180 quoting, CRLF, no formula cells', () => {
    const csv = reportCsv(report);
    expect(csv).toBe(
      'document,severity,code,line,message\r\n' +
        'http://127.0.0.1:1/sd.xml,warning,x,3,"He said ""no"", twice\nthen left"\r\n' +
        '"http://127.0.0.1:1/a,b.xml",error,http-status,,"\'=HYPERLINK(""http://evil"")"\r\n',
    );
    expect(csvField('-1')).toBe(`"'-1"`);
    expect(csvField(12)).toBe('12');
    expect(csvField(undefined)).toBe('');
  });

  it('JSON: start, documents, findings with a line (null when none) and the summary', () => {
    const parsed = JSON.parse(reportJson(report));
    expect(Object.keys(parsed)).toEqual(['start', 'sourceDescription', 'documents', 'findings', 'summary']);
    expect(parsed.documents[0]).toMatchObject({ url: 'http://127.0.0.1:1/sd.xml', capability: 'description', entries: 2 });
    expect(parsed.findings[1]).toEqual({
      document: 'http://127.0.0.1:1/a,b.xml',
      severity: 'error',
      code: 'http-status',
      line: null,
      message: '=HYPERLINK("http://evil")',
    });
    expect(parsed.summary).toEqual(report.summary);
  });

  it('JSON written a piece at a time is the text JSON.stringify writes, empty lists and strings that need escaping too', () => {
    const shaped = (r: CheckReport) => ({
      start: r.start,
      sourceDescription: r.sourceDescription,
      documents: r.documents.map((d) => ({ url: d.url, capability: d.capability, isIndex: d.isIndex, parent: d.parent, entries: d.entries, findings: d.findings })),
      findings: r.findings.map((f) => ({ document: f.document, severity: f.severity, code: f.code, line: f.line ?? null, message: f.message })),
      summary: r.summary,
    });
    const empty: CheckReport = { ...report, sourceDescription: null, documents: [{ ...report.documents[0]!, findings: [] }], findings: [] };
    for (const r of [report, empty, { ...empty, documents: [] }]) {
      expect([...reportJsonPieces(r)].join('')).toBe(`${JSON.stringify(shaped(r), null, 2)}\n`);
    }
  });
});
