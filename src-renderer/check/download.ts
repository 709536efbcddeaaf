// Saves text as a file through the browser's download (a Blob URL, released once the download started).
export function download(text: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
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
