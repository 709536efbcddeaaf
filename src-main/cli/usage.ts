// Help texts and the usage error (exit code 2).

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const HELP = {
  main: `rsdesk: discover, inspect and browse ResourceSync Sources

Usage:
  rsdesk discover <url> [--json] [--token T] [--timeout S]
  rsdesk inspect <url-or-file> [--json] [--token T] [--timeout S]
  rsdesk check <url> [--json] [--max-documents N] [--token T] [--timeout S]
  rsdesk serve [--port N] [--data-dir D]
  rsdesk <command> --help
  rsdesk --version

Exit codes: 0 success, 1 problems found (or the document was refused), 2 usage error.
`,
  discover: `Usage: rsdesk discover <url> [--json] [--token T] [--timeout S]

Finds the ResourceSync Source behind <url>, trying in turn: the document at <url> itself, its Link
header, <link rel="resourcesync"> in an HTML page, /.well-known/resourcesync, robots.txt Sitemap
lines, then "up" and "index" links. Prints the routes tried, the Source Description, its Capability
Lists and their capabilities, and the findings. A bare host name gets http://.

Options:
  --json         print the discovery result as JSON
  --token T      send "Authorization: Bearer T" to the Source
  --timeout S    per-request timeout in seconds (default 30)
  -h, --help     this help

Exit code 0 when a Source was found and no finding is an error, 1 otherwise, 2 on usage errors.
`,
  inspect: `Usage: rsdesk inspect <url-or-file> [--json] [--token T] [--timeout S]

Reads one ResourceSync document (streamed, never whole in memory) from an http(s) URL or a local
file and checks it against the specs. Prints its capability, metadata, links, entry count, findings.

Options:
  --json         print the result as JSON
  --token T      send "Authorization: Bearer T" (URLs only)
  --timeout S    per-request timeout in seconds (default 30)
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
  --max-documents N   stop after N documents, and say so (default 1000)
  --token T           send "Authorization: Bearer T" to the Source
  --timeout S         per-request timeout in seconds (default 30)
  -h, --help          this help

Exit code 0 when no finding is an error, 1 otherwise, 2 on usage errors.
`,
  serve: `Usage: rsdesk serve [--port N] [--data-dir D]

Runs ResourceSync Desktop in your browser: serves the built UI on 127.0.0.1 only and prints its
address (with a one-time access token). Runs until Ctrl+C.

Options:
  --port N       port to listen on (default: any free port)
  --data-dir D   where the database lives (default: the platform's application data folder)
  -h, --help     this help
`,
} as const;

export function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new UsageError(`--timeout must be a number of seconds between 0 and 3600, not ${JSON.stringify(value)}`);
  }
  return Math.max(1, Math.round(seconds * 1000));
}

export function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new UsageError(`--port must be a port number (0-65535), not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

export function parseMaxDocuments(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,7}$/.test(value) || Number(value) < 1) {
    throw new UsageError(`--max-documents must be a whole number of at least 1, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}
