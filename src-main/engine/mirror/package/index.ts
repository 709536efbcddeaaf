// Packages of Resource Dumps and Change Dumps (core spec §11, §13): download with resume, then read with fixity.
export { downloadPackage, parseContentRange, PackageDownloadError, type DownloadOptions, type DownloadResult } from './download.ts';
export { readPackage, type BitstreamSink, type ReadPackageOptions } from './extract.ts';
export { applicationOrder, compareManifests } from './manifest.ts';
export * from './model.ts';
export { unsafeName } from './names.ts';
export { FixityError } from './verify.ts';
export { tempFileSink, type TempFile } from './sinks.ts';
export { dumpPackages, fetchPackage, packagePath, type DumpListing, type DumpPackage, type FetchPackageOptions } from './source.ts';
