import type { KeyboardEvent, ReactNode } from 'react';
import type { DetailTab } from '../state/ui.ts';
import { useUi } from '../state/ui.ts';

export interface TabSpec {
  id: DetailTab;
  label: ReactNode;
}

/** WAI-ARIA tabs with automatic activation; the selected tab lives in the UI store. */
export function Tabs({ tabs, children }: { tabs: TabSpec[]; children: (tab: DetailTab) => ReactNode }) {
  const stored = useUi((s) => s.detailTab);
  const setTab = useUi((s) => s.setDetailTab);
  const current = tabs.some((t) => t.id === stored) ? stored : tabs[0].id;

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const at = tabs.findIndex((t) => t.id === current);
    let next = at;
    if (event.key === 'ArrowRight') next = (at + 1) % tabs.length;
    else if (event.key === 'ArrowLeft') next = (at - 1 + tabs.length) % tabs.length;
    else return;
    event.preventDefault();
    setTab(tabs[next].id);
    event.currentTarget.querySelector<HTMLElement>(`#tab-${tabs[next].id}`)?.focus();
  }

  return (
    <>
      <div role="tablist" className="tabs" aria-label="Detail" onKeyDown={onKeyDown}>
        {tabs.map((tab) => (
          <button
            key={tab.id}
            id={`tab-${tab.id}`}
            type="button"
            role="tab"
            aria-selected={tab.id === current}
            aria-controls={`panel-${tab.id}`}
            tabIndex={tab.id === current ? 0 : -1}
            className="tab"
            onClick={() => setTab(tab.id)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${current}`} aria-labelledby={`tab-${current}`} className={`tabpanel tabpanel-${current}`}>
        {children(current)}
      </div>
    </>
  );
}
