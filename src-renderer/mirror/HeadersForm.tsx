import { useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import type { MirrorDetail } from '../../src-main/contract/types.ts';
import { FORBIDDEN_HEADERS, HEADER_LIMITS, HEADER_NAME } from '../../src-main/contract/headers.ts';
import { errorMessage } from '../bridge/index.ts';
import { useSetHeaders } from './queries.ts';

interface Row {
  key: number;
  name: string;
  value: string;
}

/** What is wrong with a row's name before the round trip (main checks every row again). */
function nameProblem(name: string): string | null {
  const n = name.trim();
  if (n === '') return 'Enter the header name, or remove the row.';
  if (!HEADER_NAME.test(n)) return `"${n.slice(0, 60)}" is not a header name: letters, digits and ! # $ % & ' * + - . ^ _ \` | ~ only.`;
  if (FORBIDDEN_HEADERS.has(n.toLowerCase())) return `The ${n.toLowerCase()} header cannot be set here.`;
  return null;
}

/**
 * The mirror's extra request headers, as name/value rows, sent to its Source's origin only on every request of its
 * runs and live notifications. Kept in the mirror's folder in clear, so they are not the place for a secret.
 */
export function HeadersForm({ m, canChange }: { m: MirrorDetail; canChange: boolean }) {
  const id = useId();
  const save = useSetHeaders(m.path);
  const next = useRef(m.headers.length);
  const [rows, setRows] = useState<Row[]>(() => m.headers.map((h, i) => ({ key: i, ...h })));
  const [local, setLocal] = useState<{ key: number; message: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const origin = m.access.origin ?? 'the Source';

  function change(rowsNow: Row[]) {
    setRows(rowsNow);
    setLocal(null);
    setDone(null);
    if (!save.isPending) save.reset();
  }

  function add() {
    const key = next.current++;
    change([...rows, { key, name: '', value: '' }]);
    requestAnimationFrame(() => document.getElementById(`${id}-name-${key}`)?.focus());
  }

  function remove(key: number) {
    const at = rows.findIndex((r) => r.key === key);
    const left = rows.filter((r) => r.key !== key);
    change(left);
    // Focus stays in the list: on the row that took its place, else on "Add a header".
    const target = left[Math.min(at, left.length - 1)];
    requestAnimationFrame(() => document.getElementById(target ? `${id}-name-${target.key}` : `${id}-add`)?.focus());
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending || !canChange) return;
    for (const row of rows) {
      const problem = nameProblem(row.name);
      if (problem) {
        setLocal({ key: row.key, message: problem });
        document.getElementById(`${id}-name-${row.key}`)?.focus();
        return;
      }
    }
    save.mutate(
      rows.map((r) => ({ name: r.name.trim(), value: r.value })),
      {
        onSuccess: (detail) => {
          next.current = detail.headers.length;
          setRows(detail.headers.map((h, i) => ({ key: i, ...h })));
          setDone(detail.headers.length === 0 ? 'Saved: no extra headers.' : 'Saved. The next run and the next live notifications send them.');
        },
      },
    );
  }

  return (
    <form className="access-form" onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="settings-h">
        Extra request headers
      </h3>
      <p id={`${id}-hint`} className="field-hint">
        {`Sent to ${origin} only, with every request of this mirror (at most ${HEADER_LIMITS.count}). They are kept in the mirror's folder in clear: give a secret as the token above instead.`}
      </p>
      {rows.length > 0 && (
        <ul className="header-rows" aria-label="Headers">
          {rows.map((row, i) => (
            <li key={row.key} className="header-row">
              <input
                id={`${id}-name-${row.key}`}
                type="text"
                aria-label={`Name of header ${i + 1}`}
                placeholder="Name"
                value={row.name}
                onChange={(e) => change(rows.map((r) => (r.key === row.key ? { ...r, name: e.target.value } : r)))}
                autoComplete="off"
                autoCapitalize="off"
                spellCheck={false}
                aria-invalid={local?.key === row.key || undefined}
                aria-describedby={`${id}-hint`}
              />
              <input
                type="text"
                aria-label={`Value of header ${i + 1}`}
                placeholder="Value"
                value={row.value}
                onChange={(e) => change(rows.map((r) => (r.key === row.key ? { ...r, value: e.target.value } : r)))}
                autoComplete="off"
                autoCapitalize="off"
                spellCheck={false}
              />
              <button type="button" className="btn-secondary" aria-label={`Remove header ${i + 1}${row.name ? ` (${row.name})` : ''}`} onClick={() => remove(row.key)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {local && (
        <p className="error-text" role="alert">
          {local.message}
        </p>
      )}
      {save.isError && (
        <div className="alert alert-error" role="alert">
          <strong>Not saved.</strong> <span>{errorMessage(save.error)}</span>
        </div>
      )}
      <div className="settings-actions">
        <button id={`${id}-add`} type="button" className="btn-secondary" onClick={add} aria-disabled={rows.length >= HEADER_LIMITS.count || undefined}>
          Add a header
        </button>
        <button type="submit" className="btn-primary" aria-disabled={save.isPending || !canChange || undefined}>
          {save.isPending ? 'Saving…' : 'Save headers'}
        </button>
        <span className="ok-text" role="status">
          {done ?? ''}
        </span>
      </div>
    </form>
  );
}
