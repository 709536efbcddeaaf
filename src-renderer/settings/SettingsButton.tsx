import { useState } from 'react';
import { GearIcon } from './GearIcon.tsx';
import { SettingsDialog } from './SettingsDialog.tsx';

/** The gear in the sidebar header; the dialog it opens hands focus back to it on close. */
export function SettingsButton() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn-icon btn-settings"
        aria-label="Settings"
        title="Settings"
        aria-haspopup="dialog"
        onClick={() => setOpen(true)}
      >
        <GearIcon />
      </button>
      {open && <SettingsDialog onClose={() => setOpen(false)} />}
    </>
  );
}
