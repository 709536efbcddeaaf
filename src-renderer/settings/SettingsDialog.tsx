import { errorMessage } from '../bridge/index.ts';
import { Spinner } from '../common/Spinner.tsx';
import { useSettings } from '../data/queries.ts';
import { Dialog } from './Dialog.tsx';
import { SettingsForm } from './SettingsForm.tsx';
import { CallbackSettings } from '../live/CallbackSettings.tsx';
import { SignedInSources } from '../signin/SignedInSources.tsx';

export function SettingsDialog({ onClose }: { onClose(): void }) {
  const settings = useSettings();
  // The form starts from what the engine holds now, not from a copy cached at an earlier opening.
  const ready = settings.isFetchedAfterMount && settings.data !== undefined;

  return (
    <Dialog title="Settings" onClose={onClose}>
      {ready ? (
        <>
          {/* Top to bottom, each section with its own action; the foot only closes the dialog. */}
          <div className="dialog-scroll">
            <SettingsForm stored={settings.data} />
            <SignedInSources />
            <CallbackSettings />
          </div>
          <div className="dialog-foot">
            <span className="dialog-foot-status" />
            <button type="button" className="btn-secondary" onClick={onClose}>
              Close
            </button>
          </div>
        </>
      ) : settings.isError ? (
        <>
          <div className="alert alert-error" role="alert">
            <strong>Could not read the settings</strong>
            <span>{errorMessage(settings.error)}</span>
          </div>
          <div className="dialog-foot">
            <span className="dialog-foot-status" />
            <button type="button" className="btn-secondary" onClick={onClose}>
              Close
            </button>
          </div>
        </>
      ) : (
        <div className="empty">
          <Spinner /> Loading settings…
        </div>
      )}
    </Dialog>
  );
}
