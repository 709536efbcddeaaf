// The set-up the mirror specs share: a fixture Source, the app server (`rsdesk serve`) over its own data folder, and
// a folder for the mirrors they make, all started before the spec's tests and removed after them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '@playwright/test';
import { startFixtureSource, type FixtureSource, type FixtureSourceOptions } from './fixture-source/index.ts';
import { startAppServer, type AppServer } from './app-server.ts';

export interface MirrorSuite {
  readonly fixture: FixtureSource;
  readonly app: AppServer;
  /** Where the spec's mirrors go. */
  readonly mirrors: string;
  /** The project's folder. */
  readonly root: string;
  /** Makes the fixture's resources `ids` answer 404 (`on`), or answer again. */
  setBroken(ids: number[], on: boolean): void;
}

/** Registers the spec's beforeAll and afterAll; what they start is read from the object returned, once they ran. */
export function mirrorSuite(name: string, fixtureOptions: FixtureSourceOptions): MirrorSuite {
  const s: { fixture?: FixtureSource; app?: AppServer; dataDir?: string; mirrors?: string; root?: string } = {};
  test.beforeAll(async ({}, testInfo) => {
    s.root = join(testInfo.project.testDir, '..');
    s.dataDir = mkdtempSync(join(tmpdir(), `rsdesk-${name}-`));
    s.mirrors = mkdtempSync(join(tmpdir(), `rsdesk-${name}-folders-`));
    s.fixture = await startFixtureSource(fixtureOptions);
    s.app = await startAppServer(s.root, s.dataDir);
  });
  test.afterAll(async () => {
    await s.app?.stop();
    await s.fixture?.close();
    for (const dir of [s.dataDir, s.mirrors]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get fixture() {
      return s.fixture!;
    },
    get app() {
      return s.app!;
    },
    get mirrors() {
      return s.mirrors!;
    },
    get root() {
      return s.root!;
    },
    setBroken(ids, on) {
      for (const id of ids) s.fixture!.setBroken(s.fixture!.state.pathOf(id), on ? { status: 404 } : null);
    },
  };
}
