// Packages of Resource Dumps and Change Dumps (core spec §11, §13): download with resume, then read with fixity.
//
// How the mirror plugs them in (baseline from a Resource Dump, incremental from a Change Dump):
//   const listing = await dumpPackages(http, dumpUrl);              // follows a Dump Index
//   for (const pkg of listing.packages) {                           // Change Dump: skip packages with untilMs <= checkpoint
//     const { report } = await fetchPackage({
//       http, package: pkg, kind: listing.kind, workDir: '<mirror>/.resourcesync/packages',
//       sink: (entry, stream) => atomicWrite(entry.loc, stream),   // must read `stream` to its end; on a stream error throw the temp away
//       onDeleted: (entry) => applyDeletionPolicy(entry.loc),      // Change Dumps, in order
//       onOutcome: (o) => journal(o),                              // verified / unverifiable (+ digests) / deleted / failed (+ code, reason)
//     });
//   }
// A Resource Dump's sink is called two at a time (option `concurrency`); a Change Dump's strictly in order.
export { downloadPackage, parseContentRange, PackageDownloadError, type DownloadOptions, type DownloadResult } from './download.ts';
export { ExtractBudget, readPackage, type BitstreamFiles, type BitstreamSink, type ReadPackageOptions } from './extract.ts';
export { applicationOrder, compareManifests } from './manifest.ts';
export * from './model.ts';
export { unsafeName } from './names.ts';
export { FixityError } from './verify.ts';
export { tempFileSink, type TempFile } from './sinks.ts';
export { dumpPackages, fetchPackage, lengthOf, packagePath, PackagePrefetch, prunePackages, type DumpListing, type DumpPackage, type FetchPackageOptions } from './source.ts';
