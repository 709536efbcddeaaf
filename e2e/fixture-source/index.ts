// The project's own ResourceSync Source for tests, benchmarks and manual runs (see cli.ts).
export { startFixtureSource } from './server.ts';
export type { Failure, FixtureSource, FixtureSourceOptions, HubRequest, LoggedRequest } from './server.ts';
export type { Routes } from './site.ts';
export { PATHS } from './paths.ts';
export { BASE_TIME, SourceState, iso } from './state.ts';
export type { ChangeKind, ChangeName, ChangeRecord, ResourceState } from './state.ts';
export { generateBody, represent } from './bodies.ts';
export type { Representation } from './bodies.ts';
export { BROKEN_SOURCE } from './broken-source.ts';
export { HOSTILE_DUMP_EXPECTED } from './hostile-dump.ts';
export { ODD_BODY, SLOPPY } from './sloppy.ts';
export type { SloppyControls } from './sloppy.ts';
export { FixtureHub } from './hub.ts';
export type { HubDelivery, HubFaults, HubOptions, HubSubscription, HubVerification } from './hub.ts';
