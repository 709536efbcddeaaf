import { describe, expect, it } from 'vitest';
import { parseW3cDatetime, w3cPeriodEnd } from './datetime.ts';

describe('parseW3cDatetime', () => {
  it('reads every precision of the W3C profile', () => {
    expect(parseW3cDatetime('2013')).toBe(Date.UTC(2013, 0, 1));
    expect(parseW3cDatetime('2013-07')).toBe(Date.UTC(2013, 6, 1));
    expect(parseW3cDatetime('2013-07-16')).toBe(Date.UTC(2013, 6, 16));
    expect(parseW3cDatetime('2013-07-16T19:20Z')).toBe(Date.UTC(2013, 6, 16, 19, 20));
    expect(parseW3cDatetime('2013-07-16T19:20:30Z')).toBe(Date.UTC(2013, 6, 16, 19, 20, 30));
    expect(parseW3cDatetime('2013-07-16T19:20:30.45Z')).toBe(Date.UTC(2013, 6, 16, 19, 20, 30, 450));
    expect(parseW3cDatetime('2013-07-16T19:20:30.123456789Z')).toBe(Date.UTC(2013, 6, 16, 19, 20, 30, 123));
    expect(parseW3cDatetime('2013-07-16T19:20:30.007Z')).toBe(Date.UTC(2013, 6, 16, 19, 20, 30, 7));
  });

  it('applies time zone offsets', () => {
    expect(parseW3cDatetime('1997-07-16T19:20+01:00')).toBe(Date.UTC(1997, 6, 16, 18, 20));
    expect(parseW3cDatetime('1997-07-16T19:20:30.45-05:30')).toBe(Date.UTC(1997, 6, 17, 0, 50, 30, 450));
    expect(parseW3cDatetime('2012-06-13T17:13:47+00:00')).toBe(Date.UTC(2012, 5, 13, 17, 13, 47));
  });

  it('agrees with Date.parse on full datetimes across the calendar', () => {
    for (let t = Date.UTC(1899, 0, 1); t < Date.UTC(2101, 0, 1); t += 86_400_000 * 37 + 3_601_001) {
      const iso = new Date(t).toISOString();
      expect(parseW3cDatetime(iso)).toBe(t);
    }
  });

  it('ignores surrounding whitespace (lastmod text)', () => {
    expect(parseW3cDatetime('\n  2013-01-02T13:00:00Z \n')).toBe(Date.UTC(2013, 0, 2, 13));
  });

  it('handles leap years and years before 100', () => {
    expect(parseW3cDatetime('2000-02-29')).toBe(Date.UTC(2000, 1, 29));
    expect(parseW3cDatetime('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseW3cDatetime('1900-02-29')).toBeNull();
    expect(parseW3cDatetime('2023-02-29')).toBeNull();
    const year50 = new Date(0);
    year50.setUTCFullYear(50, 0, 1);
    expect(parseW3cDatetime('0050-01-01')).toBe(year50.getTime());
  });

  it('returns null for malformed values', () => {
    for (const bad of [
      '',
      ' ',
      '13',
      '2013-1-01',
      '2013-13',
      '2013-00-10',
      '2013-04-31',
      '2013-01-01T',
      '2013-01-01T10:00',
      '2013-01-01T10:00:00',
      '2013-01-01 10:00:00Z',
      '2013-01-01T24:00:00Z',
      '2013-01-01T10:60:00Z',
      '2013-01-01T10:00:60Z',
      '2013-01-01T10:00:00.Z',
      '2013-01-01T10:00:00+0100',
      '2013-01-01T10:00:00+24:00',
      '2013-01-01T10:00:00ZZ',
      '2013-01-01T10:00:00z',
      'yesterday',
      '２０１３',
      '2013-01-01T10:00:00Z trailing',
    ]) {
      expect(parseW3cDatetime(bad), bad).toBeNull();
    }
  });
});

describe('w3cPeriodEnd', () => {
  it('is the last millisecond of the year, month, day, minute or second named; the instant itself with a fraction', () => {
    expect(w3cPeriodEnd('2020')).toBe(Date.parse('2020-12-31T23:59:59.999Z'));
    expect(w3cPeriodEnd('2020-02')).toBe(Date.parse('2020-02-29T23:59:59.999Z'));
    expect(w3cPeriodEnd('2020-12')).toBe(Date.parse('2020-12-31T23:59:59.999Z'));
    expect(w3cPeriodEnd('2020-01-03')).toBe(Date.parse('2020-01-03T23:59:59.999Z'));
    expect(w3cPeriodEnd('2020-01-03T10:00+02:00')).toBe(Date.parse('2020-01-03T08:00:59.999Z'));
    expect(w3cPeriodEnd('2020-01-03T10:00:05Z')).toBe(Date.parse('2020-01-03T10:00:05.999Z'));
    expect(w3cPeriodEnd('2020-01-03T10:00:05.25Z')).toBe(Date.parse('2020-01-03T10:00:05.250Z'));
    expect(w3cPeriodEnd('2020-13')).toBeNull();
  });
});
