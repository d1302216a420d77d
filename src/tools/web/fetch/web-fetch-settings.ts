import type { Config } from '../../../config/config.js';

/** The `web` settings `web_fetch` runs with (`WEB_FETCH_*` in the environment). */
export type WebFetchSettings = Pick<Config['web'], 'allowHosts' | 'fetchTimeoutMs' | 'fetchMaxBytes' | 'maxRedirects' | 'outputChars'>;
