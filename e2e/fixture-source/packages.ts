// ZIP packages for Resource Dumps and Change Dumps: `manifest.xml` at the top, bitstreams at their `path`.
// jszip holds everything in memory, which is fine for the fixture's small packages.
import JSZip from 'jszip';

export async function buildPackage(manifest: string, files: { path: string; body: Buffer }[], date: Date): Promise<Buffer> {
  const zip = new JSZip();
  // A fixed date keeps the bytes (and so the advertised length and hash) the same on every run.
  zip.file('manifest.xml', manifest, { date });
  for (const file of files) zip.file(file.path, file.body, { date });
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 6 } });
}
