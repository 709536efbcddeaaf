// The mirror's fetcher against the fixture Source: retries honouring Retry-After in each of its forms (delta seconds,
// an HTTP-date, the ISO datetime sloppy Sources send), a wait longer than a mirror accepts failing with that said, and
// Last-Modified values made fit to send back.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { DEADLINE_BYTES_PER_SECOND, Fetcher, FetchFailure, httpDate, resourceSignal, ResourceSignals, retryAfterMs } from './fetcher.ts';
import { SLOWEST_BODY_BYTES_PER_SECOND } from './slow-body.ts';
import { NetworkError } from '../http/errors.ts';
import { hostileServer, redirectInside } from '../http/hostile-servers.ts';

let fixture: FixtureSource;
let fetcher: Fetcher;
beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 3 });
  fetcher = new Fetcher({ backoffMs: 10, proxyEnv: {} });
});
afterEach(async () => {
  await fetcher.close();
  await fixture.close();
});

async function get(path: string) {
  const { signal, done } = resourceSignal(30_000);
  try {
    const response = await fetcher.get(fixture.url + path, {}, signal);
    response.body.resume();
    return response;
  } finally {
    done();
  }
}

describe('request headers', () => {
  it("sends the caller's Accept (a JSON Patch's media types), else */*", async () => {
    const path = fixture.state.pathOf(1);
    const { signal, done } = resourceSignal(30_000);
    try {
      for (const accept of ['application/json-patch+json', undefined]) {
        const response = await fetcher.get(fixture.url + path, accept === undefined ? {} : { accept }, signal);
        response.body.resume();
        expect(fixture.requests.at(-1)!.headers.accept).toBe(accept ?? '*/*');
      }
    } finally {
      done();
    }
  });
});

describe('Retry-After', () => {
  it('reads delta seconds, HTTP-dates and ISO datetimes', () => {
    const now = Date.UTC(2025, 0, 1, 0, 0, 0);
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('2025-01-01T00:00:07Z', now)).toBe(7000);
    expect(retryAfterMs('2024-12-31T00:00:00Z', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
  });

  it('waits as asked on 429 and 503, then gets the resource; counts each attempt at the Source', async () => {
    const path = fixture.state.pathOf(1);
    fixture.setBroken(path, { status: 429, headers: { 'retry-after': new Date(Date.now() + 2000).toUTCString() }, times: 1 });
    const t0 = Date.now();
    const first = await get(path);
    expect(first.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    fixture.setBroken(path, { status: 503, headers: { 'retry-after': '0' }, times: 3 });
    const n = fixture.requests.length;
    expect((await get(path)).status).toBe(200);
    expect(fixture.requests.length - n).toBe(4);
    // Out of retries: the last answer is given back as it is, for the caller to report.
    fixture.setBroken(path, { status: 503, headers: { 'retry-after': '0' } });
    expect((await get(path)).status).toBe(503);
  });

  it('fails with the reason when the Source asks to wait longer than a mirror waits', async () => {
    const path = fixture.state.pathOf(2);
    fixture.setBroken(path, { status: 503, headers: { 'retry-after': '3600' } });
    await expect(get(path)).rejects.toThrow(FetchFailure);
    await expect(get(path)).rejects.toThrow(/HTTP 503: the server asks to wait 1 h \(Retry-After\), longer than the 2 min a mirror waits/);
    // Hundreds of digits (Infinity ms) or a date millennia away: said in words, not as "∞ days".
    fixture.setBroken(path, { status: 429, headers: { 'retry-after': '9'.repeat(400) } });
    await expect(get(path)).rejects.toThrow(/^HTTP 429: the server asks to wait more than 100 years \(Retry-After\), longer than the 2 min a mirror waits$/);
    fixture.setBroken(path, { status: 503, headers: { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' } });
    await expect(get(path)).rejects.toThrow(/^HTTP 503: the server asks to wait more than 100 years \(Retry-After\)/);
  });
});

describe('addresses further inside the network than the Source', () => {
  it('a redirect to 169.254.169.254, or a copy (rel="duplicate") there, is refused before any request for it', async () => {
    // The hostile server is the proxy too: a request for the metadata address would reach it, and nothing leaves 127.0.0.1.
    const s = await hostileServer(redirectInside('http://169.254.169.254/latest/meta-data/'));
    const proxied = new Fetcher({ backoffMs: 10, proxy: s.url, timeoutMs: 2_000 });
    const { signal, done } = resourceSignal(30_000);
    try {
      await expect(proxied.get(`${s.url}/start`, {}, signal)).rejects.toThrow(
        `${s.url}/start redirects to http://169.254.169.254/latest/meta-data/, which is not followed: 169.254.169.254 is a link-local address (such as a cloud server’s metadata service), which a Source at ${s.url.replace('http://', '')} may not send requests to`,
      );
      await expect(proxied.get('http://169.254.169.254/copy', {}, signal, `${s.url}/resource`)).rejects.toThrow(
        `http://169.254.169.254/copy is not requested: 169.254.169.254 is a link-local address (such as a cloud server’s metadata service), which a Source at ${s.url.replace('http://', '')} may not send requests to`,
      );
      expect(s.requests).toEqual([`GET ${s.url}/start HTTP/1.1`]);
    } finally {
      done();
      await proxied.close();
      await s.close();
    }
  });
});

describe('Last-Modified', () => {
  it('keeps HTTP-dates, rewrites ISO datetimes, drops what cannot be read', () => {
    expect(httpDate('Wed, 01 Jan 2025 00:00:05 GMT')).toBe('Wed, 01 Jan 2025 00:00:05 GMT');
    expect(httpDate('2025-01-01T00:00:05Z')).toBe('Wed, 01 Jan 2025 00:00:05 GMT');
    expect(httpDate('2025-01-01T01:00:05+01:00')).toBe('Wed, 01 Jan 2025 00:00:05 GMT');
    expect(httpDate('yesterday')).toBeNull();
    expect(httpDate('')).toBeNull();
    expect(httpDate(undefined)).toBeNull();
  });
});

describe('ResourceSignals', () => {
  const aborted = (signal: AbortSignal) => new Promise<unknown>((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));

  it('aborts a resource at its deadline, not the others that finished', async () => {
    const signals = new ResourceSignals(200);
    const quick = signals.start();
    const slow = signals.start();
    quick.done();
    expect(signals.size).toBe(1);
    const reason = await aborted(slow.signal);
    expect(reason).toBeInstanceOf(NetworkError);
    expect((reason as NetworkError).code).toBe('deadline');
    expect(quick.signal.aborted).toBe(false);
    expect(signals.size).toBe(0);
    slow.done();
  });

  it('gives a resource of known length the time to arrive at the deadline rate, and says how much had arrived', async () => {
    const signals = new ResourceSignals(100, undefined, 60_000);
    const big = signals.start();
    // 0.6 s at DEADLINE_BYTES_PER_SECOND: past the 100 ms deadline the others have.
    big.receiving(Math.round(0.6 * DEADLINE_BYTES_PER_SECOND));
    // Arriving a little faster than the deadline rate (keeping pace), but never done.
    const feed = setInterval(() => big.received(Math.round(0.02 * 1.5 * DEADLINE_BYTES_PER_SECOND)), 20);
    const small = signals.start();
    small.receiving(10);
    const t0 = Date.now();
    try {
      await aborted(small.signal);
      expect(big.signal.aborted).toBe(false);
      const reason = (await aborted(big.signal)) as NetworkError;
      expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
      expect(reason.code).toBe('deadline');
      expect(reason.message).toMatch(/^did not finish within 0\.6 s \([\d,]+ bytes had arrived\)$/);
    } finally {
      clearInterval(feed);
    }
  });

  it('takes back the time given for a length from a body that cannot bring it in time at the pace it arrives (a trickle, a length of 10^15)', async () => {
    const signals = new ResourceSignals(200, undefined, 60_000);
    const trickle = signals.start();
    trickle.receiving(1e15);
    // 100 KiB/s: far above the slowest rate (slow-body.ts), below the deadline rate its centuries were given for.
    const feed = setInterval(() => trickle.received(2 * SLOWEST_BODY_BYTES_PER_SECOND), 20);
    const t0 = Date.now();
    try {
      const reason = (await aborted(trickle.signal)) as NetworkError;
      expect(Date.now() - t0).toBeLessThan(1_500);
      expect(reason.code).toBe('deadline');
      expect(reason.message).toMatch(/^would not finish within .* \(the time given for its 1,000,000,000,000,000 bytes\) at the pace it arrives: [\d,]+ bytes in 0\.\d s; stopped$/);
    } finally {
      clearInterval(feed);
    }
    expect(signals.size).toBe(0);
  });

  it('stops a body that arrives slower than the slowest rate over a window, not one that keeps up', async () => {
    const signals = new ResourceSignals(60_000, undefined, 100);
    const slow = signals.start();
    const steady = signals.start();
    const waiting = signals.start(); // no headers yet: only the idle timeouts and the deadline apply
    slow.receiving(undefined);
    steady.receiving(undefined);
    const feed = setInterval(() => {
      slow.received(1);
      steady.received(SLOWEST_BODY_BYTES_PER_SECOND);
    }, 20);
    try {
      const reason = (await aborted(slow.signal)) as NetworkError;
      expect(reason.message).toMatch(/^arrived too slowly: \d bytes in 0\.1 s, when at least 103 were expected \(\d+ bytes in all\); stopped$/);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(steady.signal.aborted).toBe(false);
      expect(waiting.signal.aborted).toBe(false);
    } finally {
      clearInterval(feed);
      steady.done();
      waiting.done();
    }
    expect(signals.size).toBe(0);
  });

  it("aborts every resource in flight with the run's reason, and later ones at once", async () => {
    const run = new AbortController();
    const signals = new ResourceSignals(60_000, run.signal);
    const a = signals.start();
    const b = signals.start();
    const done = signals.start();
    done.done();
    const why = new Error('Cancelled');
    run.abort(why);
    expect(a.signal.reason).toBe(why);
    expect(b.signal.reason).toBe(why);
    expect(done.signal.aborted).toBe(false);
    const later = signals.start();
    expect(later.signal.aborted).toBe(true);
    expect(later.signal.reason).toBe(why);
  });

  it('leaves no listener on the run signal while nothing is in flight', () => {
    const run = new AbortController();
    const signals = new ResourceSignals(60_000, run.signal);
    for (let i = 0; i < 100; i++) signals.start().done();
    expect(signals.size).toBe(0);
    // One more in flight, then a run abort: only it is aborted, once.
    const one = signals.start();
    let calls = 0;
    one.signal.addEventListener('abort', () => calls++);
    run.abort(new Error('stop'));
    expect(calls).toBe(1);
  });
});

describe('a request waiting for a connection', () => {
  it('once aborted, fails at once and is never sent, while the Source holds every connection', async () => {
    const held = fixture.state.pathOf(1);
    const queued = fixture.state.pathOf(2);
    fixture.setPathDelay(held, 1_500);
    const one = new Fetcher({ concurrency: 1, proxyEnv: {} });
    try {
      const first = one.get(fixture.url + held, {}, new AbortController().signal);
      await new Promise((r) => setTimeout(r, 100));
      const cancel = new AbortController();
      const waiting = one.get(fixture.url + queued, {}, cancel.signal);
      const t0 = Date.now();
      setTimeout(() => cancel.abort(), 20);
      await expect(waiting).rejects.toThrow();
      // Not when the held connection is given back, 1.5 s later.
      expect(Date.now() - t0).toBeLessThan(500);
      (await first).body.resume();
      await new Promise((r) => setTimeout(r, 200));
      expect(fixture.requests.map((r) => r.path)).not.toContain(queued);
      // Aborted before it was asked for: it fails at once too.
      const again = new AbortController();
      again.abort();
      await expect(one.get(fixture.url + queued, {}, again.signal)).rejects.toThrow();
      expect(fixture.requests.map((r) => r.path)).not.toContain(queued);
    } finally {
      fixture.setPathDelay(held, 0);
      await one.close();
    }
  });
});
