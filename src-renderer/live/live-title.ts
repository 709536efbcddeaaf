/** The Live view's heading, which takes focus when the view opens and when a control in it goes away. */
export const LIVE_TITLE_ID = 'live-title';
