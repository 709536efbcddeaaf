import { resolve } from 'node:path';
import { defineConfig, externalizeDepsPlugin } from 'electron-vite';
import react from '@vitejs/plugin-react';
import type { Plugin } from 'vite';
import { META_CSP } from './src-main/server/csp.ts';

/** Puts the one Content-Security-Policy (src-main/server/csp.ts) into index.html's meta tag. */
function cspMeta(): Plugin {
  return {
    name: 'rsdesk-csp-meta',
    transformIndexHtml(html) {
      if (!html.includes('%RSDESK_CSP%')) throw new Error('index.html has no %RSDESK_CSP% placeholder for the CSP');
      return html.replace('%RSDESK_CSP%', META_CSP);
    },
  };
}

// electron-vite only auto-discovers src/main, src/preload and src/renderer; our folders are named by the
// design card, so every entry is explicit.
export default defineConfig({
  main: {
    plugins: [externalizeDepsPlugin()],
    build: {
      outDir: 'out/main',
      rollupOptions: { input: { index: resolve(__dirname, 'src-main/electron/main.ts') } },
    },
  },
  preload: {
    plugins: [externalizeDepsPlugin()],
    build: {
      outDir: 'out/preload',
      rollupOptions: { input: { index: resolve(__dirname, 'src-preload/index.ts') } },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src-renderer'),
    plugins: [react(), cspMeta()],
    build: {
      // electron-vite leaves the renderer unminified; `rsdesk serve` sends it over HTTP, so it is minified.
      minify: true,
      outDir: resolve(__dirname, 'out/renderer'),
      rollupOptions: { input: { index: resolve(__dirname, 'src-renderer/index.html') } },
    },
  },
});
