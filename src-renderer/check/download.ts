// Saves text as a file through the browser's download (a Blob URL, released once the download started).
export function download(text: string, fileName: string, type: string): void {
  // A CSV file starts with a byte order mark: without one, Excel, where archivists open these, reads UTF-8 as the
  // system's legacy code page and garbles every URI or message that is not ASCII.
  const body = type === 'text/csv' ? `\ufeff${text}` : text;
  const url = URL.createObjectURL(new Blob([body], { type: type === 'text/csv' ? 'text/csv;charset=utf-8' : type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** "check-example.org-2026-11-23" */
export function reportFileName(url: string, extension: string): string {
  let host = 'source';
  try {
    host = new URL(url).host.replace(/[^A-Za-z0-9.-]+/g, '_');
  } catch {
    // keep "source"
  }
  return `check-${host}-${new Date().toISOString().slice(0, 10)}.${extension}`;
}
