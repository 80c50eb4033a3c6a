// Tabs is the ARIA tabs pattern the admin page and "My tools" share: a
// tablist whose arrow keys, Home and End move between tabs, the picked
// tab remembered in sessionStorage under key, and one panel.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

export function useTab<T extends string>(key: string, tabs: readonly T[]): [T, (t: T) => void] {
  const saved = sessionStorage.getItem(key) as T;
  const [tab, setTab] = useState<T>(tabs.includes(saved) ? saved : tabs[0]);
  const pick = (t: T) => {
    sessionStorage.setItem(key, t);
    setTab(t);
  };
  return [tab, pick];
}

export function Tabs<T extends string>({
  tabs,
  tab,
  pick,
  label,
  name,
  panel,
  prefix = 'tab-',
  children,
}: {
  tabs: readonly T[];
  tab: T;
  pick: (t: T) => void;
  /** each tab's label */
  label: Record<T, string>;
  /** the tablist's name */
  name: string;
  /** the panel's id */
  panel: string;
  /** each tab's id is prefix + its name */
  prefix?: string;
  children: ComponentChildren;
}) {
  return (
    <>
      <div class="tabs" role="tablist" aria-label={name}>
        {tabs.map((t) => (
          <button
            type="button"
            role="tab"
            id={prefix + t}
            aria-selected={t === tab}
            aria-controls={panel}
            tabIndex={t === tab ? 0 : -1}
            onClick={() => pick(t)}
            onKeyDown={(e) => {
              const i = tabs.indexOf(t);
              const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
              if (to === undefined) return;
              e.preventDefault();
              const next = tabs[(to + tabs.length) % tabs.length];
              pick(next);
              document.getElementById(prefix + next)?.focus();
            }}
          >
            {label[t]}
          </button>
        ))}
      </div>
      <div id={panel} role="tabpanel" aria-labelledby={prefix + tab}>
        {children}
      </div>
    </>
  );
}
