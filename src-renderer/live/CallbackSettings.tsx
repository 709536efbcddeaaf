import { useEffect, useId, useState } from 'react';
import type { FormEvent } from 'react';
import { errorMessage } from '../bridge/index.ts';
import { useLiveStatus, useSelfTest, useSetLiveSettings } from './queries.ts';

/** The callback server of live notifications: where it listens, the URL hubs reach it by, and whether they can. */
export function CallbackSettings() {
  const ids = useId();
  const status = useLiveStatus();
  const save = useSetLiveSettings();
  const test = useSelfTest();
  const s = status.data;
  const [host, setHost] = useState('');
  const [port, setPort] = useState('');
  const [publicUrl, setPublicUrl] = useState('');
  useEffect(() => {
    if (!s) return;
    setHost(s.settings.host);
    setPort(String(s.settings.port));
    setPublicUrl(s.settings.publicUrl ?? '');
  }, [s]);

  function submit(event: FormEvent) {
    event.preventDefault();
    test.reset();
    save.mutate({ host: host.trim(), port: Number(port), publicUrl: publicUrl.trim() === '' ? null : publicUrl.trim() });
  }

  return (
    <form className="settings-section" onSubmit={submit} noValidate aria-labelledby={`${ids}-title`}>
      <h3 id={`${ids}-title`} className="settings-h">Callback server (live notifications)</h3>
      <p className="field-hint">
        {status.isError
          ? errorMessage(status.error)
          : !s
            ? 'Reading…'
            : s.address
              ? `Listening on ${s.address}. Hubs are given ${s.callbackBase}.${
                  s.address.endsWith(`:${s.settings.port}`) ? '' : ` This run was started on another port; the one below is used from the next start.`
                }`
              : (s.error ?? 'Not running.')}
      </p>
      <div className="callback-row">
        <div className="field">
          <label htmlFor={`${ids}-host`}>Listen on address</label>
          <input id={`${ids}-host`} value={host} onChange={(e) => setHost(e.target.value)} spellCheck={false} />
        </div>
        <div className="field">
          <label htmlFor={`${ids}-port`}>Port</label>
          <input id={`${ids}-port`} type="number" min={1} max={65535} className="input-number" value={port} onChange={(e) => setPort(e.target.value)} />
        </div>
      </div>
      <div className="field">
        <label htmlFor={`${ids}-public`}>Public callback URL</label>
        <input id={`${ids}-public`} value={publicUrl} onChange={(e) => setPublicUrl(e.target.value)} spellCheck={false} placeholder="https://tunnel.example.org" aria-describedby={`${ids}-public-note`} />
        <p id={`${ids}-public-note`} className="field-hint">
          Only when hubs cannot reach this machine directly: the address of a tunnel or reverse proxy that leads here. Leave empty to give hubs the address above.
        </p>
      </div>
      {save.isError && (
        <div className="alert alert-error dialog-alert" role="alert">
          <strong>Not applied</strong>
          <span>{errorMessage(save.error)}</span>
        </div>
      )}
      {test.data && (
        <p className={test.data.reachable ? 'ok-text' : 'error-text'} role="status">
          {test.data.reachable ? '✓ ' : ''}
          {test.data.message}
        </p>
      )}
      {test.isError && <p className="error-text" role="alert">{errorMessage(test.error)}</p>}
      <div className="settings-actions">
        <button type="submit" className="btn-primary" aria-disabled={save.isPending || undefined}>
          {save.isPending ? 'Restarting…' : 'Apply and restart the server'}
        </button>
        <button type="button" className="btn-secondary" onClick={() => test.mutate()} aria-disabled={test.isPending || undefined}>
          {test.isPending ? 'Testing…' : 'Test reachability'}
        </button>
        {save.isSuccess && <span className="ok-text">✓ Restarted with these settings.</span>}
      </div>
    </form>
  );
}
