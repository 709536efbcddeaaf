// Discovery (core spec 6.2–6.3): from whatever URL a person pastes, find the Source Description and the
// Capability Lists, reporting every route tried. The search for a Source Description stops as soon as one is
// found; routes are tried in this order:
//   document → link-header → html-link → well-known → robots → up / index links from what was found.
// Then the Source Description is read and each Capability List it names, collecting the capabilities.
import type {
  DiscoveredCapability,
  DiscoveryResult,
  DiscoveryRoute,
  DiscoveryStep,
} from '../../contract/types.ts';
import { routeLabel } from '../../contract/routes.ts';
import type { DocumentSummary, Finding, RsLn } from '../documents/model.ts';
import { DocumentError } from '../documents/errors.ts';
import type { Http } from '../http/client.ts';
import { NetworkError, formatBytes, formatDuration, messageWithoutUrl } from '../http/errors.ts';
import { HTML_SCAN_BYTES } from './html-links.ts';
import { furtherInside } from '../http/address-scope.ts';
import type { RefusalMemory } from '../refusals.ts';
import { documentName, probe, rememberedProbe, type Probe } from './probe.ts';
import { sitemapsInRobots } from './robots.ts';
import { normalizeStartUrl } from './start-url.ts';

export { normalizeStartUrl, sameStartUrl } from './start-url.ts';

export interface DiscoverOptions {
  http: Http;
  onStep?: (step: DiscoveryStep) => void;
  /** Called as each fetch starts, with the URL being fetched (a person waiting wants to know what on). */
  onFetch?: (url: string) => void;
  signal?: AbortSignal;
  /** Most documents fetched in one run (every GET counts). Default 50. */
  maxDocuments?: number;
  /** The longest the whole run may take. Default: the client's deadline for one fetch (5 min with a 30 s timeout). */
  deadlineMs?: number;
  /** Documents refused a short while ago are not fetched again; refusals found here are remembered. */
  refusals?: RefusalMemory;
  /**
   * Read lists, dumps and manifests only up to their first entry (see probe): for a caller that reads the list
   * itself next. Their findings then come from that caller's own reading.
   */
  listsHeadOnly?: boolean;
}

export const MAX_DOCUMENTS = 50;
/** resourcesync links followed per Link header or HTML page. */
export const MAX_LINK_TARGETS = 5;
/** robots.txt Sitemap: lines followed. */
export const MAX_SITEMAPS = 10;
/** Bytes of robots.txt read; a longer file is read up to here (at a line end) and a finding says so. */
export const ROBOTS_MAX_BYTES = 512 * 1024;
const MAX_FINDINGS_PER_DOCUMENT = 20;
export const WELL_KNOWN_PATH = '/.well-known/resourcesync';

export async function discover(startUrl: string, options: DiscoverOptions): Promise<DiscoveryResult> {
  const run = new DiscoveryRun(normalizeStartUrl(startUrl), options);
  return run.run();
}

class DiscoveryRun {
  readonly start: string;
  readonly routes: DiscoveryStep[] = [];
  readonly findings: Finding[] = [];
  #http: Http;
  #onStep?: (step: DiscoveryStep) => void;
  #onFetch?: (url: string) => void;
  #signal?: AbortSignal;
  #maxDocuments: number;
  #deadlineMs: number;
  #deadlineAt: number;
  #refusals?: RefusalMemory;
  #listsHeadOnly: boolean;
  #outOfTime = false;
  #fetches = 0;
  #limitReported = false;
  #probes = new Map<string, Probe>();
  #sourceDescription: Probe | null = null;
  /** ResourceSync documents found on the way (not the Source Description), to climb from. */
  #candidates: Probe[] = [];
  #capabilityLists = new Map<string, Probe>();
  #climbed = new Set<string>();
  #notedMissingUp = new Set<string>();
  /** Well-known URIs tried that served no Source Description. */
  #wellKnownMisses: string[] = [];

  constructor(start: string, options: DiscoverOptions) {
    this.start = start;
    this.#http = options.http;
    this.#onStep = options.onStep;
    this.#onFetch = options.onFetch;
    this.#signal = options.signal;
    this.#maxDocuments = options.maxDocuments ?? MAX_DOCUMENTS;
    this.#deadlineMs = options.deadlineMs ?? options.http.deadlineMs;
    this.#deadlineAt = Date.now() + this.#deadlineMs;
    this.#refusals = options.refusals;
    this.#listsHeadOnly = options.listsHeadOnly ?? false;
  }

  async run(): Promise<DiscoveryResult> {
    await this.#search();
    const capabilityLists = await this.#collect();
    if (this.#sourceDescription === null && capabilityLists.length === 0) {
      const tried = [...new Set(this.routes.map((step) => routeLabel(step.route)))].join(', ') || 'nothing';
      const found = this.#candidates[0]?.document;
      const detail = found
        ? `. Found a ${documentName(found.summary)} at ${this.#candidates[0].url}, but no Capability List or Source Description above it`
        : '';
      this.#finding('error', 'nothing-found', `No ResourceSync Source found at ${this.start}; tried: ${tried}${detail}`);
    } else if (this.#sourceDescription === null) {
      this.#finding(
        'warning',
        'no-source-description',
        `No Source Description found from ${this.start}; showing the Capability List${capabilityLists.length > 1 ? 's' : ''} found`,
      );
    }
    return {
      start: this.start,
      routes: this.routes,
      sourceDescription: this.#sourceDescription?.url ?? null,
      capabilityLists,
      findings: this.findings,
    };
  }

  // ---- the search --------------------------------------------------------------------------------------------

  async #search(): Promise<void> {
    const first = await this.#fetch(this.start);
    if (!first) return;
    this.#report('document', first);
    if (this.#consider(first)) return;

    // link-header and html-link read the start URL's own response, so they need one.
    if (first.status !== undefined && first.status >= 200 && first.status <= 299) {
      if (await this.#linkRoute('link-header', first, first.linkHeaderTargets)) return;
      if (!first.html) {
        // A body that broke off or ran out of time may well have been an HTML page: its step says why it failed.
        const message = first.error instanceof NetworkError ? 'not searched: the page could not be read' : 'not an HTML page';
        this.#step({ route: 'html-link', url: first.finalUrl, found: false, message });
      } else if (await this.#linkRoute('html-link', first, first.html.links)) return;
    }

    const origins = [...new Set([origin(this.start), origin(first.finalUrl)])];
    for (const o of origins) if (await this.#wellKnown(o)) return;
    for (const o of origins) if (await this.#robots(o)) return;

    for (let i = 0; i < this.#candidates.length && !this.#sourceDescription; i++) {
      await this.#climb(this.#candidates[i]);
    }
  }

  /** Follows resourcesync links (from a Link header or an HTML page). True once a Source Description is found. */
  async #linkRoute(route: 'link-header' | 'html-link', page: Probe, targets: string[]): Promise<boolean> {
    if (targets.length === 0) {
      const message =
        route === 'link-header'
          ? page.headers.link
            ? 'Link header without rel="resourcesync"'
            : 'no Link header with rel="resourcesync"'
          : 'HTML page without <link rel="resourcesync">';
      this.#step({ route, url: page.finalUrl, found: false, message });
      return false;
    }
    if (targets.length > MAX_LINK_TARGETS) {
      const left = targets.length - MAX_LINK_TARGETS;
      this.#finding(
        'warning',
        'link-limit',
        `${page.finalUrl}: ${targets.length} resourcesync links (${route}); only the first ${MAX_LINK_TARGETS} were followed, ` +
          `${left.toLocaleString('en')} not followed`,
      );
    }
    for (const target of targets.slice(0, MAX_LINK_TARGETS)) {
      const found = await this.#fetch(target);
      if (!found) return false;
      this.#report(route, found);
      const summary = found.document?.summary;
      // Core spec 6.3.3: the link's target is a Capability List (a Source Description is accepted too).
      if (summary && summary.capability !== 'capabilitylist' && summary.capability !== 'description') {
        this.#finding(
          'warning',
          'resourcesync-link-target',
          `${page.finalUrl}: the resourcesync link (${route}) points to a ${documentName(summary)} at ${target}; ` +
            'it should point to a Capability List (core spec 6.3.3)',
        );
      }
      if (this.#consider(found)) return true;
    }
    return false;
  }

  async #wellKnown(o: string): Promise<boolean> {
    const url = o + WELL_KNOWN_PATH;
    const found = await this.#fetch(url);
    if (!found) return false;
    this.#report('well-known', found);
    const summary = found.document?.summary;
    if (summary && summary.capability !== 'description') {
      this.#finding(
        'warning',
        'well-known-not-description',
        `${url}: the well-known URI serves a ${documentName(summary)}, not a Source Description (core spec 6.3.2)`,
      );
    }
    if (!summary) this.#wellKnownMisses.push(url);
    return this.#consider(found);
  }

  async #robots(o: string): Promise<boolean> {
    const robotsUrl = `${o}/robots.txt`;
    if (!this.#budget(robotsUrl)) return false;
    this.#onFetch?.(robotsUrl);
    let text: string;
    try {
      const response = await this.#http.get(robotsUrl, {
        signal: this.#signal,
        accept: 'text/plain, */*;q=0.5',
        deadlineAt: this.#deadlineAt,
      });
      if (response.status < 200 || response.status > 299) {
        await response.discard();
        this.#step({ route: 'robots', url: robotsUrl, found: false, message: `${response.status} ${response.statusText}`.trim(), status: response.status });
        return false;
      }
      const head = await readPrefix(response.body, ROBOTS_MAX_BYTES);
      await response.discard();
      text = head.text;
      if (head.truncated) {
        // Only whole lines: the last one may have been cut.
        text = text.slice(0, Math.max(0, text.lastIndexOf('\n')));
        this.#finding(
          'warning',
          'robots-limit',
          `${robotsUrl} is longer than ${formatBytes(ROBOTS_MAX_BYTES)}; only its first ${formatBytes(ROBOTS_MAX_BYTES)} were read for Sitemap: lines`,
        );
      }
    } catch (err) {
      this.#rethrowIfAborted(err);
      this.#step({ route: 'robots', url: robotsUrl, found: false, message: (err as Error).message });
      this.#noteOutOfTime(robotsUrl);
      return false;
    }
    const sitemaps = sitemapsInRobots(text, robotsUrl);
    if (sitemaps.length === 0) {
      this.#step({ route: 'robots', url: robotsUrl, found: false, message: 'robots.txt has no Sitemap: lines' });
      return false;
    }
    if (sitemaps.length > MAX_SITEMAPS) {
      const left = sitemaps.length - MAX_SITEMAPS;
      this.#finding(
        'warning',
        'sitemap-limit',
        `${robotsUrl}: ${sitemaps.length.toLocaleString('en')} Sitemap: lines; only the first ${MAX_SITEMAPS} were followed, ` +
          `${left.toLocaleString('en')} not followed`,
      );
    }
    for (const sitemap of sitemaps.slice(0, MAX_SITEMAPS)) {
      const found = await this.#fetch(sitemap);
      if (!found) return false;
      this.#report('robots', found);
      if (this.#consider(found)) return true;
    }
    return false;
  }

  /** Up links (then index links) from a document found, until a Source Description or a dead end. */
  async #climb(from: Probe): Promise<void> {
    let current = from;
    const chain = new Set([from.url]);
    while (!this.#sourceDescription && !this.#climbed.has(current.url)) {
      this.#climbed.add(current.url);
      const summary = current.document!.summary;
      const expected = summary.capability === 'capabilitylist' ? 'description' : 'capabilitylist';
      const up = linkHref(summary.links, 'up', current.finalUrl);
      const index = summary.isIndex ? undefined : linkHref(summary.links, 'index', current.finalUrl);
      if (up === undefined) this.#noteMissingUp(current);
      let next: Probe | null = null;
      if (up !== undefined && chain.has(up)) {
        this.#finding('warning', 'up-loop', `${current.url}: its up link leads back to ${up} (a loop)`);
      } else if (up !== undefined) {
        const found = await this.#fetch(up);
        if (!found) return;
        this.#report('up', found);
        if (found.document) {
          next = found;
          if (found.document.summary.capability !== expected) {
            this.#finding(
              'warning',
              'up-target',
              `${current.url}: its up link points to a ${documentName(found.document.summary)} at ${up}; ` +
                `expected a ${expected === 'description' ? 'Source Description' : 'Capability List'} (core spec 6.2)`,
            );
          }
        }
      }
      if (next === null && index !== undefined && !chain.has(index)) {
        const found = await this.#fetch(index);
        if (!found) return;
        this.#report('index', found);
        if (found.document) {
          next = found;
          if (!found.document.summary.isIndex) {
            this.#finding('warning', 'index-target', `${current.url}: its index link points to ${index}, which is not an index`);
          }
        }
      }
      if (next === null) return;
      chain.add(next.url);
      this.#note(next);
      current = next;
    }
  }

  // ---- reading what was found ---------------------------------------------------------------------------------

  async #collect(): Promise<DiscoveryResult['capabilityLists']> {
    const sd = this.#sourceDescription;
    if (sd === null) {
      return [...this.#capabilityLists.values()].map((list) => ({ url: list.url, capabilities: this.#capabilitiesOf(list) }));
    }
    for (const miss of this.#wellKnownMisses) {
      if (origin(miss) === origin(sd.url)) {
        this.#finding(
          'error',
          'well-known-missing',
          `${miss} does not serve the Source Description; it was found at ${sd.url}. A Source must publish it at /.well-known/resourcesync (core spec 6.3.2)`,
        );
      }
    }
    const listed: string[] = [];
    const { entries, entriesTruncated } = sd.document!;
    for (const entry of entries) {
      const capability = entry.md.capability;
      if (capability !== undefined && capability !== 'capabilitylist') {
        this.#finding(
          'warning',
          'description-entry',
          `${sd.url}: entry ${entry.loc} has capability "${capability}"; a Source Description lists Capability Lists (core spec §8)`,
          entry.line,
        );
        continue;
      }
      const url = resolveUrl(entry.loc, sd.finalUrl);
      if (url !== undefined && !listed.includes(url)) listed.push(url);
    }
    if (entriesTruncated) {
      this.#finding('warning', 'too-many-entries', `${sd.url}: only the first ${entries.length} Capability Lists were read`);
    }
    if (listed.length === 0) this.#finding('warning', 'no-capability-lists', `${sd.url}: the Source Description lists no Capability Lists`);

    const result: DiscoveryResult['capabilityLists'] = [];
    for (const url of listed) {
      const list = await this.#fetch(url);
      if (!list) break;
      const summary = list.document?.summary;
      if (summary?.capability === 'capabilitylist') {
        if (linkHref(summary.links, 'up', list.finalUrl) === undefined) this.#noteMissingUp(list);
        result.push({ url, capabilities: this.#capabilitiesOf(list) });
      } else {
        this.#finding(
          'error',
          'not-a-capability-list',
          `${url}: listed in the Source Description as a Capability List, but it is ${summary ? `a ${documentName(summary)}` : list.message}`,
        );
        result.push({ url, capabilities: [] });
      }
    }
    for (const url of this.#capabilityLists.keys()) {
      if (!listed.includes(url)) {
        this.#finding('warning', 'unlisted-capability-list', `${url}: this Capability List is not listed in the Source Description ${sd.url}`);
      }
    }
    return result;
  }

  #capabilitiesOf(list: Probe): DiscoveredCapability[] {
    const capabilities: DiscoveredCapability[] = [];
    for (const entry of list.document!.entries) {
      const capability = entry.md.capability;
      if (capability === undefined) {
        this.#finding('warning', 'capability-missing', `${list.url}: entry ${entry.loc} has no capability`, entry.line);
        continue;
      }
      const found: DiscoveredCapability = { capability, url: resolveUrl(entry.loc, list.finalUrl) ?? entry.loc };
      const hub = linkHref(entry.links, 'hub', list.finalUrl);
      // (A channel without a hub is among the reader's findings.)
      if (hub !== undefined) found.hub = hub;
      capabilities.push(found);
    }
    if (list.document!.entriesTruncated) {
      this.#finding('warning', 'too-many-entries', `${list.url}: only the first ${list.document!.entries.length} capabilities were read`);
    }
    return capabilities;
  }

  // ---- bookkeeping --------------------------------------------------------------------------------------------

  /** Records a ResourceSync document found by a search route. True when it is the Source Description. */
  #consider(found: Probe): boolean {
    if (!found.document) return false;
    this.#note(found);
    if (this.#sourceDescription) return true;
    if (!this.#candidates.includes(found)) this.#candidates.push(found);
    return false;
  }

  #note(found: Probe): void {
    const capability = found.document!.summary.capability;
    if (capability === 'description') this.#sourceDescription ??= found;
    else if (capability === 'capabilitylist' && !this.#capabilityLists.has(found.url)) this.#capabilityLists.set(found.url, found);
  }

  #noteMissingUp(found: Probe): void {
    if (this.#notedMissingUp.has(found.url)) return;
    this.#notedMissingUp.add(found.url);
    const summary = found.document!.summary;
    // The reader already said so among the document's findings.
    if (summary.findings.some((f) => f.code === 'missing-up')) return;
    if (summary.capability === 'capabilitylist') {
      this.#finding('warning', 'missing-up', `${found.url}: this Capability List has no up link to its Source Description (core spec §9)`);
    } else if (summary.capability !== 'description') {
      this.#finding('warning', 'missing-up', `${found.url}: this ${documentName(summary)} has no up link to its Capability List`);
    }
  }

  /** Whether one more fetch (of url) may start: within the document limit and the run's time. */
  #budget(url: string): boolean {
    this.#checkAborted();
    if (this.#outOfTime) return false;
    if (Date.now() >= this.#deadlineAt) {
      this.#ranOutOfTime(url, 'before fetching');
      return false;
    }
    if (this.#fetches < this.#maxDocuments) {
      this.#fetches++;
      return true;
    }
    if (!this.#limitReported) {
      this.#limitReported = true;
      this.#finding('warning', 'document-limit', `Discovery stopped after fetching ${this.#maxDocuments} documents`);
    }
    return false;
  }

  /** GET once per URL per run; null when the document budget is spent. */
  async #fetch(url: string): Promise<Probe | null> {
    // Keyed without the fragment, which is never sent: one document however it is named.
    const key = url.split('#')[0];
    const known = this.#probes.get(key);
    if (known) return known;
    // Only the costly refusals are answered from memory here: one that took 50 MB to find out. The cheap ones
    // (a wrong root, a DOCTYPE) cost a few bytes to see again and are reported as found.
    const recalled = this.#refusals?.recall(url);
    if (recalled && recalled.error.code === 'too-large') {
      const remembered = rememberedProbe(url, recalled.error, recalled.note);
      this.#probes.set(key, remembered);
      return remembered;
    }
    // A link the Source names (Link header, <link>, robots.txt, up, index) is no redirect, and was fetched wherever it
    // pointed: 169.254.169.254 (a cloud server's metadata service) from a Source on the internet included.
    const inside = URL.canParse(url) ? furtherInside(new URL(this.start), new URL(url)) : null;
    if (inside !== null) {
      const refused: Probe = { url, finalUrl: url, headers: {}, linkHeaderTargets: [], message: `not requested: ${inside}`, error: new NetworkError('bad-url', `${url} is not requested: ${inside}`, url) };
      this.#probes.set(key, refused);
      return refused;
    }
    if (!this.#budget(url)) return null;
    this.#onFetch?.(url);
    let found: Probe;
    try {
      found = await probe(this.#http, url, this.#signal, this.#deadlineAt, this.#listsHeadOnly);
    } catch (err) {
      this.#rethrowIfAborted(err);
      throw err;
    }
    this.#checkAborted();
    this.#probes.set(key, found);
    if (found.error) this.#refusals?.remember(url, found.error);
    if (found.document) this.#documentFindings(found.url, found.document.summary);
    if (found.htmlTruncated) {
      this.#finding(
        'warning',
        'html-scan-limit',
        `${found.finalUrl}: only the first ${formatBytes(HTML_SCAN_BYTES)} of this HTML page were searched for ` +
          '<link rel="resourcesync">; its head goes on beyond that',
      );
    }
    this.#noteOutOfTime(url);
    return found;
  }

  /** After a fetch failed: when the run's time is up, say so once, naming the URL it was fetching. */
  #noteOutOfTime(url: string): void {
    if (!this.#outOfTime && Date.now() >= this.#deadlineAt) this.#ranOutOfTime(url, 'while fetching');
  }

  #ranOutOfTime(url: string, when: 'before fetching' | 'while fetching'): void {
    this.#outOfTime = true;
    this.#finding(
      'error',
      'discovery-deadline',
      `Discovery ran out of time (${formatDuration(this.#deadlineMs)}) ${when} ${url}; what was found until then is shown`,
    );
  }

  #documentFindings(url: string, summary: DocumentSummary): void {
    const shown = summary.findings.slice(0, MAX_FINDINGS_PER_DOCUMENT);
    for (const f of shown) {
      const finding: Finding = { severity: f.severity, code: f.code, message: `${url}: ${f.message}` };
      if (f.line !== undefined) finding.line = f.line;
      this.findings.push(finding);
    }
    const rest = summary.findings.length - shown.length;
    if (rest > 0) this.#finding('warning', 'more-findings', `${url}: ${rest} more findings not shown here`);
  }

  #report(route: DiscoveryRoute, found: Probe): void {
    const summary = found.document?.summary;
    let message = summary ? documentName(summary) : found.message;
    if (summary && found.finalUrl !== found.url) message += ` (redirected to ${found.finalUrl})`;
    const step: DiscoveryStep = { route, url: found.url, found: summary !== undefined, message };
    if (summary) step.capability = summary.capability;
    if (found.status !== undefined) step.status = found.status;
    // A document refused by the reader (an HTML page is no refusal: it is where links are looked for).
    if (found.error instanceof DocumentError && found.error.code !== 'html') step.refused = found.error.message;
    if (found.error instanceof NetworkError) step.unreadable = true;
    this.#step(step);
  }

  #step(step: DiscoveryStep): void {
    // The step shows its URL; its message need not say it again ("Connection refused by HOST (URL)").
    step.message = messageWithoutUrl(step.message, step.url);
    this.routes.push(step);
    this.#onStep?.(step);
  }

  #finding(severity: Finding['severity'], code: string, message: string, line?: number): void {
    const finding: Finding = { severity, code, message };
    if (line !== undefined) finding.line = line;
    this.findings.push(finding);
  }

  #checkAborted(): void {
    if (this.#signal?.aborted) throw new NetworkError('aborted', `Discovery cancelled: ${this.start}`, this.start);
  }

  #rethrowIfAborted(err: unknown): void {
    if (this.#signal?.aborted) throw new NetworkError('aborted', `Discovery cancelled: ${this.start}`, this.start, { cause: err });
  }
}

function origin(url: string): string {
  return new URL(url).origin;
}

/** The absolute URL, without its fragment (never sent to the server: cl.xml#1 and cl.xml#2 are one document). */
function resolveUrl(href: string, base: string): string | undefined {
  try {
    const url = new URL(href, base);
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}

/** First link with this rel (rel values may hold several space-separated types), resolved. */
function linkHref(links: RsLn[], rel: string, base: string): string | undefined {
  for (const link of links) {
    if (link.rel.toLowerCase().split(/\s+/).includes(rel)) {
      const url = resolveUrl(link.href, base);
      if (url !== undefined) return url;
    }
  }
  return undefined;
}

/** The first `limit` bytes of a body as UTF-8 text (robots.txt is UTF-8, RFC 9309), and whether there was more. */
async function readPrefix(body: AsyncIterable<Uint8Array>, limit: number): Promise<{ text: string; truncated: boolean }> {
  const decoder = new TextDecoder('utf-8');
  let text = '';
  let bytes = 0;
  for await (const chunk of body) {
    const room = limit - bytes;
    if (chunk.byteLength > room) {
      text += decoder.decode(chunk.subarray(0, room));
      return { text, truncated: true };
    }
    bytes += chunk.byteLength;
    text += decoder.decode(chunk, { stream: true });
  }
  return { text: text + decoder.decode(), truncated: false };
}
