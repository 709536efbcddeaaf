import type { MouseEvent } from 'react';
import { isFollowable, isHttpUrl } from '../lib/links.ts';
import { openExternal, useFollowDocument } from '../tree/navigate.ts';
import { focusDetailTitle } from './title-focus.ts';

interface Props {
  href: string;
  rel?: string;
  capability?: string;
}

/** A URL that opens inside the app when it names a ResourceSync document, else in the system browser. */
export function LinkTarget({ href, rel, capability }: Props) {
  const follow = useFollowDocument();
  if (!isHttpUrl(href)) return <span className="mono">{href}</span>;
  const inside = isFollowable(href, rel, capability);
  function onClick(event: MouseEvent) {
    event.preventDefault();
    if (!inside) return void openExternal(href);
    const link = event.currentTarget;
    follow(href, capability);
    focusDetailTitle(link);
  }
  return (
    <a
      href={href}
      className={`link ${inside ? 'link-inside' : 'link-external'}`}
      onClick={onClick}
      rel="noopener noreferrer"
      target="_blank"
      title={inside ? `Open ${href} in this app` : `Open ${href} in the browser`}
      data-follow={inside ? 'inside' : 'external'}
    >
      {href}
      <span className="link-mark" aria-hidden="true">{inside ? ' →' : ' ↗'}</span>
    </a>
  );
}
