// Human names of ResourceSync capabilities, as the spec writes them.

const LABELS: Record<string, string> = {
  description: 'Source Description',
  capabilitylist: 'Capability List',
  resourcelist: 'Resource List',
  resourcedump: 'Resource Dump',
  'resourcedump-manifest': 'Resource Dump Manifest',
  changelist: 'Change List',
  changedump: 'Change Dump',
  'changedump-manifest': 'Change Dump Manifest',
  'change-notification': 'Change Notification',
};

/** "Resource List", "Resource List Index", … ; unknown values are shown as written. */
export function capabilityLabel(capability: string | undefined, isIndex = false): string {
  if (!capability) return isIndex ? 'Index' : 'Document';
  const label = LABELS[capability] ?? capability;
  return isIndex ? `${label} Index` : label;
}

export function isKnownCapability(capability: string | undefined): boolean {
  return capability !== undefined && capability in LABELS;
}

/** Documents whose entries name other ResourceSync documents, i.e. that have children in the tree. */
export function isNavigational(capability: string | undefined): boolean {
  return capability === 'description' || capability === 'capabilitylist';
}

export function isChangeCapability(capability: string | undefined): boolean {
  return capability === 'changelist' || capability === 'changedump' || capability === 'changedump-manifest' ||
    capability === 'change-notification';
}
