// Help texts, the usage error (exit code 2) and the checks of numeric options.
import { CHECK_MAX_DOCUMENTS, CHECK_MAX_DOCUMENTS_RANGE, MIRROR_LIMITS, REFUSAL_RANGE, REFUSAL_SECONDS, TIMEOUT_RANGE, TIMEOUT_SECONDS } from '../contract/limits.ts';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const HELP = {
  main: `rsdesk: discover, inspect, check and mirror ResourceSync Sources

Usage:
  rsdesk discover <url> [--json] [--token T] [--timeout S]
  rsdesk inspect <url-or-file> [--json] [--token T] [--timeout S]
  rsdesk check <url> [--json] [--max-documents N] [--token T] [--timeout S]
  rsdesk serve [--port N] [--live-port N] [--data-dir D]
  rsdesk sync <url> --dest <dir> [--capabilitylist URL] [--map PREFIX=DIR]… [--allow-host HOST]…
              [--mode auto|baseline|incremental] [--use-dumps] [--with-metadata] [--delete keep|delete|quarantine]
              [--allow-mass-delete] [--dry-run] [--concurrency N] [--delay S] [--token T | --basic USER:PASS] [--header "Name: value"]…
              [--proxy env|none|URL] [--forget-credentials] [--timeout S] [--pause-after-refusals S] [--json] [--quiet]
  rsdesk retry --dest <dir> [--run ID | --all] [--json] [--quiet] [--concurrency N] [--token T | --basic USER:PASS] [--timeout S]
  rsdesk audit --dest <dir> [--rehash | --last] [--json] [--quiet] [--token T | --basic USER:PASS] [--timeout S]
  rsdesk runs --dest <dir> [--json]
  rsdesk watch <capabilitylist-or-topic-url> --dest <dir> [--listen HOST:PORT] [--public-url URL] [--secret S]
               [--lease SECONDS] [--apply] [--sync-on-ping] [--timeout S] [--json]
  rsdesk watch --listen HOST:PORT [--json]
  rsdesk <command> --help | rsdesk help <command>
  rsdesk --version

Exit codes: 0 success; 1 problems found, something failed, or the command could not run; 2 usage error;
75 try later (the mirror folder is in use by another run, or the Source refused everything until the run
paused); 130 / 143 / 129 stopped by Ctrl-C / SIGTERM / SIGHUP (the next run resumes); 141 the reader of the
output went away.
Run "rsdesk <command> --help" for a command's options.
`,
  discover: `Usage: rsdesk discover <url> [--json] [--token T] [--timeout S]

Finds the ResourceSync Source behind <url>, trying in turn: the document at <url> itself, its Link
header, <link rel="resourcesync"> in an HTML page, /.well-known/resourcesync, robots.txt Sitemap
lines, then "up" and "index" links. Prints the routes tried, the Source Description, its Capability
Lists and their capabilities, and the findings. A bare host name gets http://.

Options:
  --json         print the discovery result as JSON
  --token T      send "Authorization: Bearer T" to the Source
  --timeout S    per-request timeout in whole seconds, 1 to 600 (default 30)
  -h, --help     this help

Exit code 0 when a Source was found and no finding is an error, 1 otherwise, 2 on usage errors.
`,
  inspect: `Usage: rsdesk inspect <url-or-file> [--json] [--token T] [--timeout S]

Reads one ResourceSync document (streamed, never whole in memory) from an http(s) URL or a local
file and checks it against the specs. Prints its capability, metadata, links, entry count, findings.

Options:
  --json         print the result as JSON
  --token T      send "Authorization: Bearer T" (URLs only)
  --timeout S    per-request timeout in whole seconds, 1 to 600 (default 30)
  -h, --help     this help

Exit code 0 when no finding is an error, 1 otherwise or when the document is refused, 2 on usage errors.
`,
  check: `Usage: rsdesk check <url> [--json] [--max-documents N] [--token T] [--timeout S]

Checks a whole ResourceSync Source: finds it from <url> as discover does, then reads every document
it links from the Source Description down (Capability Lists, lists, indexes and their parts, dumps
and their manifests), each once and streamed, and checks each against the specs and against the
documents that list it. Resources, packages and notification channels are not fetched. Prints a
summary, then the findings grouped by document.

Options:
  --json              print the report as JSON
  --max-documents N   stop after N documents, and say so: 1 to 100,000 (default 1,000)
  --token T           send "Authorization: Bearer T" to the Source
  --timeout S         per-request timeout in whole seconds, 1 to 600 (default 30)
  -h, --help          this help

Exit code 0 when no finding is an error, 1 otherwise, 2 on usage errors.
`,
  sync: `Usage: rsdesk sync <url> --dest <dir> [--capabilitylist URL] [--map PREFIX=DIR]... [--allow-host HOST]...
                   [--mode auto|baseline|incremental] [--use-dumps] [--with-metadata] [--delete keep|delete|quarantine]
                   [--allow-mass-delete] [--dry-run] [--concurrency N] [--delay S] [--json] [--token T | --basic USER:PASS]
                   [--header "Name: value"]... [--proxy env|none|URL] [--forget-credentials] [--timeout S]
                   [--pause-after-refusals S] [--quiet]

Mirrors a ResourceSync Source into the folder <dir>, whose state lives in <dir>/.resourcesync/. <url> is
anything discover accepts (a site, a Source Description, a Capability List, a Resource or Change List);
it may be left out once the folder is a mirror. Every resource is checked against the list's hash and
length while it downloads, written to a temporary file, made durable, then put in place.

Options:
  --dest DIR            the mirror's folder (created if needed); a file already there that the mirror
                        did not make is never replaced (that resource fails, saying so)
  --capabilitylist URL  which Capability List, when the Source has several
  --map PREFIX=DIR      put URIs under PREFIX in DIR, a folder inside <dir> and not in .resourcesync
                        (repeatable; longest prefix wins); default: <host>[_<port>]/<path>. A PREFIX
                        ending in / takes URIs starting with it; any other takes the URI itself and those
                        going on with /, ? or #: http://h/data maps http://h/data/x, not http://h/database
  --allow-host HOST     also mirror URIs on HOST (repeatable; * for any); other hosts are refused
  --mode M              auto (default: resume an interrupted run, else baseline for a new mirror,
                        incremental afterwards), baseline or incremental
  --use-dumps           baseline from the Resource Dump, incremental from the Change Dump (or their
                        Indexes), when the Capability List offers them: packages download into
                        <dir>/.resourcesync/packages/ (resumable), each bitstream is checked and put in
                        place; changes after the Change Dump come from the Change List. Otherwise the
                        lists are used, and said so
  --with-metadata       also mirror the metadata records entries link with rel="describedby", each at
                        the path its own URI maps to, known to the inventory as metadata of its resource
  --delete P            what to do with resources the Source deleted: keep (default; reported),
                        delete, or quarantine (moved into <dir>/.resourcesync/quarantine/, beside any
                        earlier copy of the same path)
  --allow-mass-delete   let a baseline delete or quarantine more resources than the Source lists (without
                        it, a Resource List served empty or cut short keeps them all, and says so)
  --dry-run             show what would happen; nothing is written
  --concurrency N       connections per host, 1 to 256 (default: the mirror's setting, else 8)
  --delay S             least time between two requests, across all connections: 0 to 3600 seconds, such as
                        0.5 (default: the mirror's setting, else 0)
  --json                print {"mode","created","updated","deleted","unchanged","skipped","failed","bytes","seconds","failures"}
                        (a dry run records nothing: past its first 10,000 failures, "failuresNotListed" counts them)
  -q, --quiet           no progress and no notes on stderr; it says something there only when the exit code is not 0
                        (an error, failures, a pause: one line); stdout is the same
  --token T             send "Authorization: Bearer T" to the Source (its origin only; also RSDESK_TOKEN)
  --basic USER:PASS     HTTP basic authentication instead (its origin only; also RSDESK_BASIC)
  --forget-credentials  stop sending credentials and forget the kept ones
  --header "Name: value"  an extra request header for the Source's origin (repeatable; replaces the
                        mirror's extra headers)
  --proxy P             env (the HTTP_PROXY, HTTPS_PROXY and NO_PROXY variables), none, or a proxy URL
                        (default: the mirror's setting, else env)
  --timeout S           connect and stalled-body timeout in whole seconds, 1 to 600 (default: the mirror's
                        setting, else 30)
  --pause-after-refusals S  when the Source has refused every request (429, 503, 502, 504, or no answer)
                        for S seconds in a row, the run pauses and says what the Source answered and when
                        to try again; the next sync resumes it. 1 to 604,800 seconds (a week); default: the
                        mirror's setting, else 1800 (30 min)
  -h, --help            this help

Settings (credentials, headers, concurrency, delay, timeout, proxy, pause after refusals) are kept with the mirror: a later
sync of <dir> uses them without being told again. A token or password is never written into <dir>: it
is kept in mirror-secrets.json in the user's data folder (in clear, readable only by the user; the
desktop app seals it with the OS keychain). Progress is shown on stderr when it is a terminal.
Ctrl-C (or SIGTERM, or SIGHUP when its terminal or ssh session closes) stops the run: the downloads under way
finish (after SIGTERM or SIGHUP, within 5 s), what was verified is kept, and the next sync resumes the run; a
second signal stops at once.

Exit code 0 when nothing failed, 1 otherwise, 2 on usage errors, 75 when the folder is in use by another run
or the run paused after refusals (try later); 130, 143, 129 when stopped by Ctrl-C, SIGTERM, SIGHUP.
`,
  retry: `Usage: rsdesk retry --dest <dir> [--run ID | --all] [--json] [--quiet] [--concurrency N] [--token T | --basic USER:PASS]
                    [--timeout S]

Fetches again only the resources that failed in the last run of the mirror in <dir> (or in run ID), with the
same checks as rsdesk sync, as a run of its own in the journal; what was verified is not touched. Each is
fetched as the Source's lists describe it now. A retry paused in the app, or stopped by Ctrl-C or a kill, is
taken up again for what it had not done yet: by rsdesk retry alone when it is the mirror's last run, or with
--run and its number. A failure of the last retry is retried with the other failures of the run it retried.
With --all, or when the last run applied change notifications (rsdesk watch) and nothing failed in it, every
failure still standing is retried, whatever run it is of, as one retry (at most 10,000; it says how many are left).
rsdesk runs lists the runs and their failures.

Options:
  --dest DIR            the mirror's folder
  --run ID              the run whose failures to fetch again, or the interrupted retry to take up (default:
                        the last run that is not an audit; after notifications, every failure still standing)
  --all                 every failure still standing, whatever run it is of
  --json                print {"mode","created","updated","deleted","unchanged","skipped","failed","bytes","seconds","failures"}
                        ("mode" is "retry")
  -q, --quiet           no progress on stderr; it says something there only when the exit code is not 0 (an error,
                        failures again, a pause: one line); stdout is the same
  --concurrency N       connections per host, 1 to 256 (default: the mirror's setting, else 8)
  --token T             send "Authorization: Bearer T" to the Source (its origin only; also RSDESK_TOKEN;
                        default: the credentials kept with the mirror)
  --basic USER:PASS     HTTP basic authentication instead (its origin only; also RSDESK_BASIC)
  --timeout S           connect and stalled-body timeout in whole seconds, 1 to 600 (default: the mirror's, else 30)
  -h, --help            this help

Ctrl-C (or SIGTERM, or SIGHUP) pauses the retry: the downloads under way finish (after SIGTERM or SIGHUP,
within 5 s), what was verified is kept, and the next rsdesk retry --dest <dir> takes it up; a second signal
stops at once.

Exit code 0 when nothing failed (or nothing is left to retry), 1 otherwise, 2 on usage errors, 75 when the
folder is in use by another run or the retry paused after refusals (try later); 130, 143, 129 when stopped by
Ctrl-C, SIGTERM, SIGHUP.
`,
  audit: `Usage: rsdesk audit --dest <dir> [--rehash | --last] [--json] [--quiet] [--token T | --basic USER:PASS] [--timeout S]

Compares the mirror in <dir> with the Source's current Resource List (plus the Change List's changes
since its "at"): in sync, missing, extra (files no listed URI maps to), changed (hash, length or
lastmod), unverifiable; kept (what the Source no longer lists and --delete keep kept: not a difference).
--rehash reads every local file again instead of trusting the inventory. A file found changed since it
was mirrored (its size; with --rehash, its bytes) is marked, and the next sync fetches it again.
--json prints {"inSync","missing","extra","changed","unverifiable","kept"}. Each report is kept in the
mirror's state (the newest 5); --last prints the last one again without asking the Source.

Options:
  --dest DIR     the mirror's folder
  --rehash       hash every local file again
  --last         print the last audit's report, kept in the mirror; nothing is fetched
  --json         print the report as JSON
  -q, --quiet    say on stderr too, in one line, when the mirror is not in sync (stdout is the same): with stdout
                 sent elsewhere, stderr says something only when the exit code is not 0
  --token T      send "Authorization: Bearer T" to the Source (its origin only; also RSDESK_TOKEN;
                 default: the credentials kept with the mirror)
  --basic USER:PASS  HTTP basic authentication instead (its origin only; also RSDESK_BASIC)
  --timeout S    per-request timeout in whole seconds, 1 to 600 (default 30)
  -h, --help     this help

Exit code 0 only when in sync, 1 otherwise, 2 on usage errors, 75 when the folder is in use by another run
(try later); 130, 143, 129 when stopped by Ctrl-C, SIGTERM, SIGHUP.
`,
  runs: `Usage: rsdesk runs --dest <dir> [--json]

The run history of the mirror in <dir>: each sync and audit with its counts, bytes, phase times and
failures.

Options:
  --dest DIR     the mirror's folder
  --json         print {"checkpoint","runs"}
  -h, --help     this help

Exit code 0, 1 when <dir> is not a mirror, 2 on usage errors. It only reads: it runs beside a sync.
`,
  watch: `Usage: rsdesk watch <capabilitylist-or-topic-url> --dest <dir> [--listen HOST:PORT] [--public-url URL]
                    [--secret S] [--lease SECONDS] [--apply] [--sync-on-ping] [--timeout S] [--json]
       rsdesk watch --listen HOST:PORT [--json]

Subscribes (WebSub) to the change-notification channel(s) of a Capability List, or to one topic URL,
through a callback server of its own, and prints every event until Ctrl+C, SIGTERM or SIGHUP (its
terminal or ssh session closed), which unsubscribes (waiting 5 s at most for the hub to verify it) and
exits 0 (129 after SIGHUP). The subscriptions and every notification received are kept in the mirror
folder <dir> (.resourcesync/state.sqlite); with --apply the changes are applied to that mirror (same
fixity, atomic writes and journal as rsdesk sync), gaps are filled from the Change List. With
--listen alone it only receives pings (RSS Ping 1.0 GET /ping, 2.0 POST /ping, XML-RPC POST /RPC2).

Options:
  --dest D           the mirror folder the channel feeds
  --listen HOST:PORT where the callback server listens (default 127.0.0.1:${'8741'}; port 0: any free one)
  --public-url URL   the URL hubs reach the callback server by (a tunnel, a reverse proxy)
  --secret S         the hub.secret for signed deliveries (default: a fresh random one)
  --lease SECONDS    the lease to ask for, 1 to 99999999 seconds (default: none asked; the hub decides;
                     renewed at about 80 %)
  --apply            apply notifications to the mirror (else only read, order and report them)
  --sync-on-ping     a ping naming this Source starts an incremental sync (with --apply)
  --json             one JSON object per line per event: {"type": "subscribed" | "notification" |
                     "applied" | "gap" | "renewed" | "ping" | "rejected" | "error" | …, "at": …, …}
  --timeout S        deadline of each request to the hub and the Source, in whole seconds, 1 to 600
                     (default 30)
  -h, --help         this help

Exit code 0 when stopped by Ctrl+C or SIGTERM (after unsubscribing), 129 by SIGHUP (after unsubscribing
too), 1 when it could not start (the port
taken, nothing to subscribe to), 2 on usage errors. While another run holds the mirror folder, notifications
are kept and applied once it is free.
`,
  serve: `Usage: rsdesk serve [--port N] [--live-port N] [--data-dir D]

Runs ResourceSync Desktop in your browser: serves the built UI on 127.0.0.1 only and prints its
address (with a one-time access token). Runs until Ctrl+C, SIGTERM or SIGHUP (its terminal or ssh
session closed), and then stops cleanly.

Options:
  --port N       port to listen on, 0 to 65535 (default 0: any free port)
  --live-port N  port of the callback server for change notifications and pings, for this run,
                 0 to 65535 (default: the one in Settings, 8741; 0: any free one)
  --data-dir D   where the database lives (default: the platform's application data folder)
  -h, --help     this help

Exit code 0 when stopped by Ctrl+C or SIGTERM, 129 by SIGHUP, 1 when it could not start (the port taken), 2 on
usage errors.
`,
} as const;

// Numbers on the command line: digits only (no "1e3", "0x10", " 5" or "", which Number() would take), each
// range stated exactly as it is checked. The timeout and the document cap are the app's own ranges.

function parseWhole(option: string, value: string, min: number, max: number, range: string): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`${option} must be ${range}, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** --pause-after-refusals S: milliseconds for the engine. */
export function parseRefusalLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return parseWhole('--pause-after-refusals', value, REFUSAL_SECONDS.min, REFUSAL_SECONDS.max, REFUSAL_RANGE) * 1000;
}

/** --timeout S: milliseconds for the engine. */
export function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return parseWhole('--timeout', value, TIMEOUT_SECONDS.min, TIMEOUT_SECONDS.max, TIMEOUT_RANGE) * 1000;
}

/** A port; `option` names it in the message (--live-port x said "--port must be…"). */
export function parsePort(value: string | undefined, option = '--port'): number | undefined {
  if (value === undefined) return undefined;
  return parseWhole(option, value, 0, 65535, 'a whole number from 0 to 65535 (0: any free port)');
}

export function parseMaxDocuments(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return parseWhole('--max-documents', value, CHECK_MAX_DOCUMENTS.min, CHECK_MAX_DOCUMENTS.max, CHECK_MAX_DOCUMENTS_RANGE);
}

export const CONCURRENCY = MIRROR_LIMITS.concurrency;

export function parseConcurrency(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return parseWhole('--concurrency', value, CONCURRENCY.min, CONCURRENCY.max, `a whole number from ${CONCURRENCY.min} to ${CONCURRENCY.max}`);
}

/** --run ID: a run's number, as rsdesk runs shows it. */
export function parseRunId(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return parseWhole('--run', value, 1, 999_999_999, 'the number of a run (rsdesk runs lists them)');
}

/** --delay S: fractions allowed (0.25 s between requests is a polite crawl); milliseconds for the engine. */
export function parseDelay(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const { min, max } = MIRROR_LIMITS.delaySeconds;
  if (!/^\d{1,4}(\.\d{1,3})?$/.test(value) || Number(value) > max) {
    throw new UsageError(`--delay must be a number of seconds from ${min} to ${max} (such as 0.5), not ${JSON.stringify(value)}`);
  }
  return Math.round(Number(value) * 1000);
}

/**
 * A --dest as given, refused when empty or blank: an unset shell variable (`--dest "$DIR"`) gives "", which would
 * resolve to the current folder and mirror into it.
 */
export function parseDest(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new UsageError('--dest is empty: give the folder of the mirror (an unset shell variable gives an empty value)');
  return value;
}

/** --data-dir as given, refused when empty for the reason --dest is: "" put the app's database in the current folder. */
export function parseDataDir(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new UsageError('--data-dir is empty: give the folder for the database (an unset shell variable gives an empty value)');
  return value;
}
