import { describe, expect, it } from 'vitest';
import type { EntryShape } from '../../src-main/contract/types.ts';
import { columnsFor, relativeLoc } from './columns.ts';

const ids = (capability: string, fields: EntryShape['fields']) => columnsFor(capability, { prefix: '', fields }).map((c) => c.id);
const EVERYTHING: EntryShape['fields'] = ['lastmod', 'capability', 'change', 'datetime', 'length', 'type', 'hash', 'path', 'links'];

describe('columnsFor', () => {
  it('shows change and datetime only for change documents', () => {
    expect(ids('resourcelist', EVERYTHING)).toEqual(['index', 'loc', 'lastmod', 'length', 'type', 'hash']);
    expect(ids('changelist', EVERYTHING)).toEqual(['index', 'loc', 'change', 'datetime', 'lastmod', 'length', 'type', 'hash']);
    expect(ids('changedump', ['change', 'datetime'])).toEqual(['index', 'loc', 'change', 'datetime']);
  });

  it('shows path for Manifests, capability for Source Descriptions and Capability Lists', () => {
    expect(ids('resourcedump-manifest', EVERYTHING)).toEqual(['index', 'loc', 'path', 'lastmod', 'length', 'type', 'hash']);
    expect(ids('changedump-manifest', EVERYTHING)).toContain('path');
    expect(ids('resourcedump', EVERYTHING)).not.toContain('path');
    expect(ids('description', ['capability'])).toEqual(['index', 'loc', 'capability']);
    expect(ids('capabilitylist', ['capability', 'lastmod'])).toEqual(['index', 'loc', 'capability', 'lastmod']);
    expect(ids('resourcelist', ['capability'])).toEqual(['index', 'loc']);
  });

  it('leaves out every column no entry has a value for', () => {
    expect(ids('changelist', [])).toEqual(['index', 'loc']);
    expect(ids('resourcelist', ['length'])).toEqual(['index', 'loc', 'length']);
  });
});

describe('relativeLoc', () => {
  it('drops the common prefix, never the whole loc', () => {
    expect(relativeLoc('http://x.org/a/b/1.xml', 'http://x.org/a/')).toBe('b/1.xml');
    expect(relativeLoc('http://x.org/a/', 'http://x.org/a/')).toBe('http://x.org/a/');
    expect(relativeLoc('http://y.org/1', 'http://x.org/')).toBe('http://y.org/1');
    expect(relativeLoc('http://x.org/1', '')).toBe('http://x.org/1');
  });
});
