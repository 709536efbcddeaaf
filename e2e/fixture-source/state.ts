// The Source's state: a logical clock, the mutable resource set of dataset1 with every version it ever had,
// and the change log that Change Lists, Change Dumps and notifications are cut from.
import { EXTENSIONS, TYPES, fnv1a, generateBody, prng, represent, type BodyType, type Representation } from './bodies.ts';

/** Every date in the fixture derives from this instant, so documents are the same on every run. */
export const BASE_TIME = Date.UTC(2025, 0, 1, 0, 0, 0);

export function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export type ChangeKind = 'create' | 'update' | 'delete';
export type ChangeName = 'created' | 'updated' | 'deleted';

export interface ChangeRecord {
  /** 1-based position in the change log. */
  seq: number;
  change: ChangeName;
  id: number;
  /** Absolute URL of the resource. */
  loc: string;
  /** Version after the change (the deleted version for `deleted`). */
  version: number;
  datetime: string;
  type: string;
  /** For created / updated: of the new version. */
  hash?: string;
  length?: number;
}

export interface ResourceState {
  id: number;
  type: BodyType;
  version: number;
  deleted: boolean;
  /** Datetime of the last create / update. */
  lastmod: string;
}

export class SourceState {
  readonly seed: number;
  readonly dataset = 'dataset1';
  readonly changeListSize: number;
  readonly resources = new Map<number, ResourceState>();
  readonly changes: ChangeRecord[] = [];
  #base: string;
  #tick = 0;
  #nextId = 1;
  #random: () => number;
  #cache = new Map<string, Representation>();
  #listeners: ((records: ChangeRecord[]) => void)[] = [];

  constructor(options: { seed: number; resources: number; changeListSize: number; base: string }) {
    this.seed = options.seed;
    this.changeListSize = options.changeListSize;
    this.#base = options.base;
    this.#random = prng(fnv1a(`changes:${options.seed}`));
    // The initial resources are themselves changes (creations), so the first Change Lists are not empty.
    this.change('create', options.resources);
  }

  /** Logical now: one second after the latest change. */
  now(): string {
    return iso(BASE_TIME + (this.#tick + 1) * 1000);
  }

  pathOf(id: number): string {
    const resource = this.resources.get(id);
    return `/${this.dataset}/res/${id}.${EXTENSIONS[resource?.type ?? typeOf(id)]}`;
  }

  locOf(id: number): string {
    return this.#base + this.pathOf(id);
  }

  representation(id: number, version: number): Representation {
    const key = `${id}:${version}`;
    let rep = this.#cache.get(key);
    if (!rep) {
      const type = this.resources.get(id)?.type ?? typeOf(id);
      rep = represent(generateBody({ seed: this.seed, dataset: this.dataset, id, version, type, size: 'medium' }), type);
      this.#cache.set(key, rep);
    }
    return rep;
  }

  live(): ResourceState[] {
    return [...this.resources.values()].filter((r) => !r.deleted);
  }

  onChange(listener: (records: ChangeRecord[]) => void): void {
    this.#listeners.push(listener);
  }

  /** `id`: update or delete that resource (a live one) instead of one picked at random. */
  change(kind: ChangeKind, count = 1, id?: number): ChangeRecord[] {
    const records: ChangeRecord[] = [];
    for (let i = 0; i < count; i++) {
      const record = this.#changeOne(kind, id);
      if (!record) break;
      records.push(record);
    }
    if (records.length) for (const listener of this.#listeners) listener(records);
    return records;
  }

  #changeOne(kind: ChangeKind, id?: number): ChangeRecord | null {
    let resource: ResourceState;
    if (kind === 'create') {
      const id = this.#nextId++;
      resource = { id, type: typeOf(id), version: 1, deleted: false, lastmod: '' };
      this.resources.set(id, resource);
    } else {
      const live = this.live();
      if (live.length === 0) return null;
      const chosen = id === undefined ? undefined : this.resources.get(id);
      resource = chosen && !chosen.deleted ? chosen : live[Math.floor(this.#random() * live.length)];
      if (kind === 'update') resource.version += 1;
      else resource.deleted = true;
    }
    this.#tick += 1;
    const datetime = iso(BASE_TIME + this.#tick * 1000);
    const change: ChangeName = kind === 'create' ? 'created' : kind === 'update' ? 'updated' : 'deleted';
    const record: ChangeRecord = {
      seq: this.changes.length + 1,
      change,
      id: resource.id,
      loc: this.locOf(resource.id),
      version: resource.version,
      datetime,
      type: resource.type,
    };
    if (change !== 'deleted') {
      resource.lastmod = datetime;
      const rep = this.representation(resource.id, resource.version);
      record.hash = rep.hash;
      record.length = rep.body.length;
    }
    this.changes.push(record);
    return record;
  }

  /** Change Lists, oldest first; a list closes when the next change does not fit. The newest is always open. */
  changeLists(): ChangeListSlice[] {
    const slices: ChangeListSlice[] = [];
    const size = this.changeListSize;
    const count = Math.max(1, Math.ceil(this.changes.length / size));
    let from = iso(BASE_TIME);
    for (let k = 1; k <= count; k++) {
      const records = this.changes.slice((k - 1) * size, k * size);
      const closed = k < count;
      const until = closed ? records[records.length - 1].datetime : undefined;
      slices.push({ number: k, from, until, records });
      if (until) from = until;
    }
    return slices;
  }
}

export interface ChangeListSlice {
  number: number;
  from: string;
  /** Absent for the open (newest) Change List. */
  until?: string;
  records: ChangeRecord[];
}

function typeOf(id: number): BodyType {
  return TYPES[id % TYPES.length];
}
