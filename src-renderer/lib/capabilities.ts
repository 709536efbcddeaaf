// Human names of ResourceSync capabilities, as the spec writes them.
import { CAPABILITY_NAMES, capabilityName } from '../../src-main/engine/documents/model.ts';


/** "Resource List", "Resource List Index", … ; unknown values are shown as written. */
export function capabilityLabel(capability: string | undefined, isIndex = false): string {
  if (!capability) return isIndex ? 'Index' : 'Document';
  return capabilityName(capability, isIndex);
}

export function isKnownCapability(capability: string | undefined): boolean {
  return capability !== undefined && capability in CAPABILITY_NAMES;
}

/** Documents whose entries name other ResourceSync documents, i.e. that have children in the tree. */
export function isNavigational(capability: string | undefined): boolean {
  return capability === 'description' || capability === 'capabilitylist';
}

export function isChangeCapability(capability: string | undefined): boolean {
  return capability === 'changelist' || capability === 'changedump' || capability === 'changedump-manifest' ||
    capability === 'change-notification';
}

export function isDump(capability: string | undefined): boolean {
  return capability === 'resourcedump' || capability === 'changedump';
}

export function isManifest(capability: string | undefined): boolean {
  return capability === 'resourcedump-manifest' || capability === 'changedump-manifest';
}

/** Documents whose `change`/`datetime` mean something (core spec §12–§14): the others never show those columns. */
export function isChangeDocument(capability: string | undefined): boolean {
  return capability === 'changelist' || capability === 'changedump' || capability === 'changedump-manifest';
}
