import { useCheck } from '../state/check.ts';
import { focusWhenReady } from '../mirror/focus.ts';
import { LIVE_TITLE_ID } from './live-title.ts';
import { useLive } from './state.ts';

/**
 * Shows the Live view and takes focus to its heading: the button pressed is ten sidebar stops away (the Live button),
 * or goes away with the pane it was in (Open Live on a channel), which left focus on <body>.
 */
export function openLive(from: Element): void {
  useCheck.getState().hide();
  useLive.getState().show();
  focusWhenReady(() => document.getElementById(LIVE_TITLE_ID), from);
}
