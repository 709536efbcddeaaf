import { describe, expect, it } from 'vitest';
import type { DiscoveryStep } from '../../src-main/contract/types.ts';
import { discoverySummary } from './summary.ts';

const step = (route: DiscoveryStep['route'], found: boolean, message: string): DiscoveryStep => ({ route, url: 'http://x/', found, message });

describe('discoverySummary', () => {
  it('says how many ways were tried and what was found where, in words', () => {
    const steps = [
      step('document', true, 'Capability List'),
      step('link-header', false, 'no Link header with rel="resourcesync"'),
      step('html-link', false, 'not an HTML page'),
      step('well-known', true, 'Source Description (redirected to http://x/sd.xml)'),
    ];
    expect(discoverySummary(steps, false)).toBe(
      'Tried 4 ways: found a Capability List at the URL itself and a Source Description at /.well-known/resourcesync.',
    );
  });

  it('says when nothing was found, and while it runs that it is not over', () => {
    const missed = [step('document', false, 'not XML'), step('robots', false, '404 Not Found')];
    expect(discoverySummary(missed, false)).toBe('Tried 2 ways: found nothing.');
    expect(discoverySummary(missed.slice(0, 1), true)).toBe('Tried 1 way so far: found nothing yet.');
    expect(discoverySummary([], true)).toBeNull();
  });

  it('lists three finds with commas', () => {
    const steps = [step('document', true, 'Resource List'), step('up', true, 'Capability List'), step('index', true, 'Resource List Index')];
    expect(discoverySummary(steps, false)).toBe(
      'Tried 3 ways: found a Resource List at the URL itself, a Capability List through an "up" link and a Resource List Index through an "index" link.',
    );
  });
});
