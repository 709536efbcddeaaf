const integer = new Intl.NumberFormat('en-US');

export function formatCount(n: number): string {
  return integer.format(n);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** Length attributes are strings in the document; show them grouped when they are plain integers. */
export function formatLength(value: string | undefined): string {
  if (value === undefined) return '';
  return /^\d+$/.test(value) ? integer.format(Number(value)) : value;
}

const W3C = /^(\d{4}-\d\d-\d\d)(?:T(\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(Z|[+-]\d\d:\d\d)?)?$/;

/** A compact form of a W3C datetime for dense rows ("2013-01-03 09:00Z"); the full value goes in a title. */
export function formatTime(value: string | undefined): string {
  if (!value) return '';
  const m = W3C.exec(value);
  if (!m) return value;
  if (!m[2]) return m[1];
  return `${m[1]} ${m[2]}${m[3] === 'Z' ? 'Z' : (m[3] ?? '')}`;
}

/** Path and query of a URL: names a node without repeating the Source's host on every row. */
export function urlPath(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return url;
  }
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
