/** The Source URL field: where focus goes when a notice in the sidebar is dismissed and nothing closer is left to take it. */
export const SOURCE_URL_ID = 'source-url';
