// Before each measure: what earlier ones left to the file system (deleted folders, whose blocks this machine's ext4,
// mounted with `discard`, trims at its next journal commit; dirty pages) is written out now, so that it is not
// charged to the next measure, ours or a reference.
import { spawnSync } from 'node:child_process';

export function settleDisk(): void {
  spawnSync('sync', { stdio: 'ignore' });
}
