import { describe, expect, it } from 'vitest';
import { ORIGIN_NEEDED, toPatch, toValues, unchanged } from './values.ts';

describe('the Settings form values', () => {
  it('sends a token only with the Source it is for', () => {
    expect(toPatch({ token: ' tok ', origin: '', seconds: '30' })).toEqual({ field: 'origin', message: ORIGIN_NEEDED });
    expect(toPatch({ token: 'tok', origin: ' example.org ', seconds: '30' })).toEqual({ patch: { bearerToken: 'tok', tokenOrigin: 'example.org', timeoutMs: 30_000 } });
    // No token: nothing to name, and a leftover address is dropped with it.
    expect(toPatch({ token: '', origin: 'example.org', seconds: '30' })).toEqual({ patch: { bearerToken: null, tokenOrigin: null, timeoutMs: 30_000 } });
  });

  it('shows a token kept without its Source as it is, unchanged until the person names one', () => {
    const kept = { bearerToken: 'old', tokenOrigin: null, timeoutMs: 30_000 };
    const values = toValues(kept);
    expect(values).toEqual({ token: 'old', origin: '', seconds: '30' });
    expect(unchanged(values, kept)).toBe(true);
    expect(unchanged({ ...values, origin: 'https://example.org' }, kept)).toBe(false);
  });
});
